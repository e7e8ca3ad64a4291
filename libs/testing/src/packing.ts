/**
 * What a consumer test needs to check a workspace package as npm would publish it: the tarball (`npm pack`), the
 * publish dry run, and the hygiene every published @humanpass package keeps (licence, changelog, repository,
 * compiled output only, source maps that carry their sources).
 */
import { execFile } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface PackedPackage {
  name: string;
  filename: string;
  files: { path: string }[];
}

/** npm run from inside a workspace passes its settings on in npm_* variables; a packing or consumer npm must not see them. */
export const outsideNpmEnv = (): NodeJS.ProcessEnv =>
  Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));

/** `npm pack` of the package in `packageDir`, the tarball written to `destination`. */
export async function packPackage(packageDir: string, destination: string): Promise<PackedPackage> {
  const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", destination], {
    cwd: packageDir,
    env: outsideNpmEnv(),
  });
  return JSON.parse(stdout)[0];
}

/** `npm publish --dry-run` of the package in `packageDir`: what npm would publish, nothing sent. */
export async function publishDryRun(packageDir: string): Promise<{ name: string; version: string }> {
  const { stdout } = await run("npm", ["publish", "--dry-run", "--json", "--access", "public"], {
    cwd: packageDir,
    env: outsideNpmEnv(),
  });
  // npm 10 keys the report by package name; earlier versions print the report itself.
  const report = JSON.parse(stdout.slice(stdout.indexOf("{")));
  return typeof report.name === "string"
    ? report
    : (Object.values(report)[0] as { name: string; version: string });
}

const SHIPPED = /^(package\.json|README\.md|LICENSE|CHANGELOG\.md|dist\/.+\.(js|d\.ts|js\.map))$/;
const TEST_FILE = /(^|\/)(tests?|fixtures?)\/|\.(test|spec)\./;

/** Every way the packed `files` and the `manifest` fall short of what a published package must have. */
export function packageHygieneProblems(manifest: Record<string, unknown>, files: string[]): string[] {
  const problems: string[] = [];
  for (const required of ["package.json", "README.md", "LICENSE", "CHANGELOG.md"])
    if (!files.includes(required)) problems.push(`${required} is not in the tarball`);
  for (const file of files)
    if (!SHIPPED.test(file) || TEST_FILE.test(file)) problems.push(`${file} should not be shipped`);
  if (typeof manifest.license !== "string") problems.push("no license field");
  if (!manifest.repository) problems.push("no repository field");
  if (typeof manifest.homepage !== "string") problems.push("no homepage field");
  if (manifest.private) problems.push("private");
  return problems;
}

/** Source maps under `installedDir` whose sources are neither embedded nor shipped. */
export async function sourceMapsWithoutSources(installedDir: string): Promise<string[]> {
  const entries = await readdir(installedDir, { recursive: true });
  const lacking: string[] = [];
  for (const entry of entries.filter((e) => e.endsWith(".js.map"))) {
    const map = JSON.parse(await readFile(path.join(installedDir, entry), "utf8"));
    const embedded =
      Array.isArray(map.sourcesContent) &&
      map.sourcesContent.length === map.sources.length &&
      map.sourcesContent.every((s: unknown) => typeof s === "string");
    if (!embedded) lacking.push(entry);
  }
  return lacking;
}

/**
 * Relative module specifiers in the JavaScript and declarations under `installedDir` that do not name an emitted
 * file (`./x.ts`, `./x`, `./dir`): what Node's ESM loader and `moduleResolution: node16` would fail on.
 */
export async function specifiersNotAsEmitted(installedDir: string): Promise<string[]> {
  const entries = await readdir(installedDir, { recursive: true });
  const problems: string[] = [];
  const specifier = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["'](\.\.?\/[^"']*)["']/g;
  for (const entry of entries.filter(
    (e) => /\.(js|d\.ts)$/.test(e) && !e.split(path.sep).includes("node_modules"),
  )) {
    const text = await readFile(path.join(installedDir, entry), "utf8");
    for (const [, target] of text.matchAll(specifier))
      if (!/\.(m|c)?js$|\.json$/.test(target!)) problems.push(`${entry}: ${target}`);
  }
  return problems;
}
