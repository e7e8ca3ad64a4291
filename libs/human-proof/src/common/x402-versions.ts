import { readFileSync, realpathSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { satisfies } from "semver";

/**
 * The x402 packages whose version decides what our extension and hooks are told. npm installs an `@x402/*` client
 * older than our peer range without a word (e.g. `@x402/axios` 2.11 beside our `^2.23`), with its own older
 * `@x402/core` under it: an x402Client from that copy never gives the extension the URL a 402 came from, and the
 * agent silently pays the standard price. So the range is checked where the extension or the server is built.
 */
const X402_PACKAGES = [
  "@x402/core",
  "@x402/fetch",
  "@x402/axios",
  "@x402/evm",
  "@x402/express",
  "@x402/hono",
  "@x402/next",
];
const CORE = "@x402/core";

export interface FoundPackage {
  name: string;
  version: string;
  /** The package's directory, symbolic links resolved. */
  dir: string;
}

/** The directory of the installed package `name` that `file` (resolved for it) belongs to. */
function packageDirOf(file: string, name: string): string | undefined {
  const marker = `${path.sep}node_modules${path.sep}${name.split("/").join(path.sep)}${path.sep}`;
  const at = file.lastIndexOf(marker);
  return at < 0 ? undefined : file.slice(0, at + marker.length - 1);
}

function resolveFrom(dir: string, name: string): FoundPackage | undefined {
  let file: string;
  try {
    file = createRequire(path.join(dir, "noop.js")).resolve(name);
  } catch {
    return undefined;
  }
  const packageDir = packageDirOf(realpathSync(file), name);
  if (!packageDir) return undefined;
  const { version } = JSON.parse(readFileSync(path.join(packageDir, "package.json"), "utf8"));
  return { name, version: String(version), dir: packageDir };
}

/**
 * Every `@x402/*` package found from `fromDirs` (as `require` resolves it there), and the `@x402/core` each of those
 * resolves in turn: the copies an application actually runs.
 */
export function findX402Packages(fromDirs: string[]): FoundPackage[] {
  const found = new Map<string, FoundPackage>();
  for (const dir of fromDirs)
    for (const name of X402_PACKAGES) {
      const hit = resolveFrom(dir, name);
      if (hit) found.set(hit.dir, hit);
    }
  for (const hit of [...found.values()]) {
    const core = hit.name === CORE ? undefined : resolveFrom(hit.dir, CORE);
    if (core) found.set(core.dir, core);
  }
  return [...found.values()];
}

/** What is wrong with `found` for `range`: each package outside it, by version and place, and the copies of core. */
export function x402VersionProblems(found: FoundPackage[], range: string, base: string): string[] {
  const where = (p: FoundPackage) => path.relative(base, p.dir) || p.dir;
  const outside = found.filter((p) => !satisfies(p.version, range, { includePrerelease: true }));
  if (outside.length === 0) return [];
  const problems = outside.map((p) => `${p.name} ${p.version} (${where(p)}) is outside ${range}`);
  const cores = found.filter((p) => p.name === CORE);
  if (cores.length > 1)
    problems.push(
      `${cores.length} copies of ${CORE} are installed: ${cores.map((c) => `${c.version} (${where(c)})`).join(", ")}`,
    );
  return problems;
}

/** This package's `@x402/core` peer range (a test keeps it equal to package.json, which a bundle does not carry). */
export const X402_CORE_RANGE = "^2.23.0";
let checked = false;

/**
 * Throws, naming each version found, when an `@x402/*` package this process would use (from this package or from
 * the working directory) is outside our `@x402/core` peer range. Checked once per process.
 */
export function assertX402Versions(): void {
  if (checked) return;
  const range = X402_CORE_RANGE;
  const here = path.dirname(fileURLToPath(import.meta.url));
  const problems = x402VersionProblems(findX402Packages([here, process.cwd()]), range, process.cwd());
  if (problems.length > 0)
    throw new Error(
      `@humanpass/human-proof needs x402 packages within ${range}: ${problems.join("; ")}. Install versions within ${range} (\`npm ls ${CORE}\` shows which package brings each copy).`,
    );
  checked = true;
}
