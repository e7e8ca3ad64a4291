import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compileContracts, renderAbiModule, renderArtifact } from "./compile.ts";
import { ARTIFACTS_DIR, CONTRACT_NAMES } from "./paths.ts";

describe("committed contract artifacts", () => {
  const fresh = compileContracts();

  it.each(CONTRACT_NAMES)("%s matches a fresh compile of contracts/", (name) => {
    const committed = readFileSync(join(ARTIFACTS_DIR, `${name}.json`), "utf8");
    expect(committed).toBe(renderArtifact(fresh[name]));
  });

  it("src/abi.ts matches the compiled ABIs", () => {
    expect(readFileSync(new URL("./abi.ts", import.meta.url), "utf8")).toBe(renderAbiModule(fresh));
  });
});
