import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { compileContracts, renderAbiModule, renderArtifact } from "./compile.ts";
import { ARTIFACTS_DIR, CONTRACT_NAMES } from "./paths.ts";

const artifacts = compileContracts();
for (const name of CONTRACT_NAMES) {
  writeFileSync(join(ARTIFACTS_DIR, `${name}.json`), renderArtifact(artifacts[name]));
}
writeFileSync(new URL("./abi.ts", import.meta.url), renderAbiModule(artifacts));
process.stdout.write(
  `compiled ${CONTRACT_NAMES.length} contracts with ${artifacts.SchemaRegistry.compiler}\n`,
);
