import { readFileSync, writeFileSync } from "node:fs";
import { renderAsyncApi, withEventTables } from "./asyncapi";
import { repoPath } from "./paths";

/** Writes docs/asyncapi.yaml and the tables of docs/events.md from the event catalog; `--check` only compares. */
const check = process.argv.includes("--check");
const targets: [string, string][] = [
  [repoPath("docs/asyncapi.yaml"), renderAsyncApi()],
  [repoPath("docs/events.md"), withEventTables(readFileSync(repoPath("docs/events.md"), "utf8"))],
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
      `${file} does not match libs/events/src/catalog.ts: run npm run docs:events -w @humanpass/deploy-validate\n`,
    );
  } else {
    writeFileSync(file, content);
    process.stdout.write(`wrote ${file}\n`);
  }
}
process.exitCode = stale > 0 ? 1 : 0;
