// The runtime tree of one service for its image: `node scripts/stage-service.mjs [--manifests] <service> <out>` writes
// to <out> the root manifest and lock file narrowed to the workspace packages the service needs at run time (itself
// and its @humanpass dependencies, transitively, without devDependencies), each of those packages' manifest and
// dist/, and the data folders the service reads at run time; with --manifests, the manifests alone (the Dockerfile
// installs from them before the sources are copied in). `npm install --omit=dev` in <out> then installs only what
// those packages depend on, at the versions of the lock file. (`npm ci --workspace` would install every workspace's
// production dependencies: the devnet's Hardhat, the test helpers' vitest.)
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

const DATA_FOLDERS = ["contexts", "config"];

const args = process.argv.slice(2);
const manifestsOnly = args[0] === "--manifests";
const [service, out] = manifestsOnly ? args.slice(1) : args;
if (!service || !out) {
  process.stderr.write("usage: node scripts/stage-service.mjs [--manifests] <service> <out>\n");
  process.exit(64);
}
const readJson = (file) => JSON.parse(readFileSync(file, "utf8"));
const root = readJson("package.json");
// The workspace patterns are folders or `folder/*`.
const workspaceDirs = root.workspaces.flatMap((pattern) =>
  pattern.endsWith("/*")
    ? readdirSync(pattern.slice(0, -2)).map((name) => path.join(pattern.slice(0, -2), name))
    : [pattern],
);
const dirByName = new Map(
  workspaceDirs
    .filter((dir) => existsSync(path.join(dir, "package.json")))
    .map((dir) => [readJson(path.join(dir, "package.json")).name, dir]),
);
const start = `@humanpass/${service}`;
if (!dirByName.has(start)) {
  process.stderr.write(`no workspace package ${start}\n`);
  process.exit(64);
}

const needed = new Set();
const visit = (name) => {
  if (needed.has(name)) return;
  needed.add(name);
  for (const dependency of Object.keys(
    readJson(path.join(dirByName.get(name), "package.json")).dependencies ?? {},
  ))
    if (dirByName.has(dependency)) visit(dependency);
};
visit(start);

const dirs = [...needed].map((name) => dirByName.get(name)).sort();
mkdirSync(out, { recursive: true });
const { devDependencies: _rootDev, scripts: _rootScripts, ...runtimeRoot } = root;
writeFileSync(
  path.join(out, "package.json"),
  `${JSON.stringify({ ...runtimeRoot, workspaces: dirs }, null, 2)}\n`,
);
cpSync("package-lock.json", path.join(out, "package-lock.json"));
for (const dir of dirs) {
  const { devDependencies: _dev, scripts: _scripts, ...manifest } = readJson(path.join(dir, "package.json"));
  mkdirSync(path.join(out, dir), { recursive: true });
  writeFileSync(path.join(out, dir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  if (manifestsOnly) continue;
  if (!existsSync(path.join(dir, "dist"))) throw new Error(`${dir}/dist is missing: build first`);
  cpSync(path.join(dir, "dist"), path.join(out, dir, "dist"), { recursive: true });
}
for (const data of manifestsOnly ? [] : DATA_FOLDERS) {
  const folder = path.join("services", service, data);
  if (existsSync(folder)) cpSync(folder, path.join(out, folder), { recursive: true });
}
process.stdout.write(`${service}: ${dirs.join(", ")}\n`);
