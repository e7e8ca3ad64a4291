import { readFileSync, writeFileSync } from "node:fs";
import { renderAsyncApi, withEventTables } from "./asyncapi.ts";
import { withConfigTables } from "./config-docs.ts";
import { repoPath } from "./paths.ts";

/**
 * Writes the generated parts of the docs: docs/asyncapi.yaml and the tables of docs/events.md from the event
 * catalog, the configuration tables of docs/deploy.md from the services' config schemas. `--check` compares.
 */
const check = process.argv.includes("--check");
const targets: [string, string][] = [
  [repoPath("docs/asyncapi.yaml"), renderAsyncApi()],
  [repoPath("docs/events.md"), withEventTables(readFileSync(repoPath("docs/events.md"), "utf8"))],
  [repoPath("docs/deploy.md"), await withConfigTables(readFileSync(repoPath("docs/deploy.md"), "utf8"))],
];
let stale = 0;
for (const [file, content] of targets) {
  let current = "";
  try {
    current = readFileSync(file, "utf8");
  } catch {}
  if (current === content) continue;
  if (check) {
    stale++;
    process.stderr.write(
      `${file} does not match the event catalog or the services' config: run npm run docs -w @humanpass/deploy-validate\n`,
    );
  } else {
    writeFileSync(file, content);
    process.stdout.write(`wrote ${file}\n`);
  }
}
process.exitCode = stale > 0 ? 1 : 0;
