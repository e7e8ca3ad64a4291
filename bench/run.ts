// Runs every benchmark (bench/<name>/index.ts) one after another, or only those named on the command line.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const names = readdirSync(here, { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(path.join(here, d.name, "index.ts")))
  .map((d) => d.name)
  .filter((n) => wanted.length === 0 || wanted.includes(n));

let failed = 0;
for (const name of names) {
  process.stdout.write(`\n=== bench/${name} ===\n`);
  const r = spawnSync(
    process.execPath,
    ["--conditions=@humanpass/source", path.join(here, name, "index.ts")],
    {
      stdio: "inherit",
    },
  );
  if (r.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
