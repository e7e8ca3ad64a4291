/**
 * A Node release other than the one running the tests, for the checks integrators depend on (the lowest Node the
 * SDK packages declare): the official binary as the npm registry publishes it (package node-<platform>-<arch>, as
 * scripts/ensure-node.sh fetches the project's own), kept in `cacheDir`/node-<version> so it is fetched once.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rename, rm } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { outsideNpmEnv } from "./packing.ts";

const run = promisify(execFile);

const PLATFORMS: Partial<Record<NodeJS.Platform, string>> = { linux: "linux", darwin: "darwin" };
const ARCHS: Partial<Record<NodeJS.Architecture, string>> = { x64: "x64", arm64: "arm64" };

/** The path of the `node` binary of release `version` (e.g. "22.12.0"), fetched into `cacheDir` when missing. */
export async function nodeRelease(version: string, cacheDir: string): Promise<string> {
  const dir = path.join(cacheDir, `node-${version}`);
  const binary = path.join(dir, "bin", "node");
  if (existsSync(binary)) return binary;
  const platform = PLATFORMS[process.platform];
  const arch = ARCHS[process.arch];
  if (!platform || !arch)
    throw new Error(`no node-<platform>-<arch> package for ${process.platform}-${process.arch}`);
  await mkdir(cacheDir, { recursive: true });
  const work = await mkdtemp(path.join(cacheDir, `.node-${version}-`));
  try {
    const { stdout } = await run("npm", ["pack", "--json", `node-${platform}-${arch}@${version}`], {
      cwd: work,
      env: outsideNpmEnv(),
      timeout: 300_000,
    });
    const [{ filename }] = JSON.parse(stdout) as { filename: string }[];
    await run("tar", ["-xzf", filename], { cwd: work });
    const { stdout: reported } = await run(path.join(work, "package", "bin", "node"), ["-v"]);
    if (reported.trim() !== `v${version}`)
      throw new Error(`node-${platform}-${arch}@${version} reports ${reported}`);
    // Whole or not at all: a concurrent or interrupted fetch never leaves a half-extracted release in `dir`.
    await rename(path.join(work, "package"), dir).catch((error) => {
      if (!existsSync(binary)) throw error;
    });
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  return binary;
}
