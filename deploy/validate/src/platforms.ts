import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import type { Problem } from "./problems.ts";

/** The images' recipes and what a user runs to build and start them (compose's scripts, make). */
const USER_PATH_FILES = ["Dockerfile", "deploy/devnet/Dockerfile", "docker-compose.yml", "Makefile"];
const USER_PATH_DIRS = ["scripts", "scripts/compose"];
const ARCHITECTURE = /\b(amd64|x86_64|x86-64|x64|arm64|aarch64|armv7l?|i[36]86)\b/i;
/** A line that names architectures to translate the machine's own (uname -m, process.arch) is not hard-coding one. */
const READS_OWN_ARCHITECTURE = /uname -m|process\.arch|os\.arch\(\)/;
const DEBIAN_OR_ROOT = /\b(apt-get|apt|dpkg|dpkg-deb|debootstrap|sudo)\b/;

/**
 * The packages of package-lock.json that run an install script, and why each works on linux/arm64 (and on a base
 * image with no compiler) without a build: a new one needs the same look before it is added here.
 */
export const INSTALL_SCRIPTS_REVIEWED: Record<string, string> = {
  "@scarf/scarf": "install-time analytics of deploy/validate's AsyncAPI parser; nothing native",
  bufferutil: "optional dependency of ws, which falls back to JavaScript when the addon is not built",
  "cpu-features": "optional dependency of ssh2 (dockerode, test tools only); ssh2 works without it",
  esbuild: "build stage only; its binary is @esbuild/<platform>-<arch>, published for linux-arm64",
  keccak:
    "the devnet's Hardhat; `node-gyp-build || exit 0`, and it falls back to its JavaScript implementation",
  protobufjs: "the install script only checks the version; nothing native",
  secp256k1: "`node-gyp-build || exit 0`, and it falls back to its elliptic (JavaScript) implementation",
  ssh2: "dockerode (test tools only); its optional crypto addon has a JavaScript fallback",
  "utf-8-validate": "optional dependency of ws, which falls back to JavaScript when the addon is not built",
};

const packageName = (lockPath: string) => lockPath.slice(lockPath.lastIndexOf("node_modules/") + 13);

/**
 * What keeps the images and the scripts a user runs free of one architecture, one distribution and root:
 * - the Dockerfiles' base (ARG NODE_IMAGE) defaults to a Docker official image by name and tag, which is a
 *   multi-architecture index (linux/amd64 and linux/arm64): no registry host, no digest (one digest may be one
 *   architecture's manifest), and no `FROM --platform`;
 * - the images' recipes, docker-compose.yml, the Makefile and scripts/ name no architecture, except to translate
 *   the machine's own; the images and the compose scripts call no apt, dpkg, debootstrap or sudo (the stand-ins under
 *   deploy/local-images and CI's .ci/ may: they are this machine's fallback);
 * - every platform-specific package in package-lock.json that is published for linux-x64 is also there for
 *   linux-arm64, and every package with an install script has been reviewed (INSTALL_SCRIPTS_REVIEWED).
 */
export function platformProblems(root: string): { checked: string[]; problems: Problem[] } {
  const problems: Problem[] = [];
  const checked: string[] = [];
  const files = [
    ...USER_PATH_FILES,
    ...USER_PATH_DIRS.flatMap((dir) =>
      existsSync(path.join(root, dir))
        ? readdirSync(path.join(root, dir))
            .filter((name) => /\.(sh|mjs)$/.test(name))
            .map((name) => `${dir}/${name}`)
        : [],
    ),
  ].filter((file) => existsSync(path.join(root, file)));
  for (const file of files) {
    const lines = readFileSync(path.join(root, file), "utf8").split("\n");
    lines.forEach((line, i) => {
      const code = line.replace(/(^|\s)#.*$/, "");
      const arch = ARCHITECTURE.exec(code);
      if (arch && !READS_OWN_ARCHITECTURE.test(code))
        problems.push({ where: file, path: `line ${i + 1}`, message: `names an architecture (${arch[1]})` });
      const isImageOrCompose = file.endsWith("Dockerfile") || file.startsWith("scripts/compose/");
      const debian = DEBIAN_OR_ROOT.exec(code);
      if (isImageOrCompose && debian)
        problems.push({
          where: file,
          path: `line ${i + 1}`,
          message: `${debian[1]}: the images and compose scripts assume no Debian host and no root`,
        });
    });
    if (file.endsWith("Dockerfile")) {
      const text = lines.join("\n");
      const base = /^ARG NODE_IMAGE=(\S+)$/m.exec(text)?.[1];
      if (!base || !/^node:[\w.-]+$/.test(base))
        problems.push({
          where: file,
          path: "ARG NODE_IMAGE",
          message: `the default base must be the official multi-architecture node image by tag (node:<tag>), not ${base ?? "unset"}`,
        });
      if (/^FROM\s+--platform/m.test(text))
        problems.push({ where: file, path: "FROM", message: "must not pin a platform" });
    }
  }
  checked.push(`${files.length} image, compose and script files (architectures, apt/root)`);

  const lockFile = path.join(root, "package-lock.json");
  if (existsSync(lockFile)) {
    const packages: Record<string, { os?: string[]; cpu?: string[]; hasInstallScript?: boolean }> =
      JSON.parse(readFileSync(lockFile, "utf8")).packages;
    const names = new Set(Object.keys(packages).map(packageName));
    for (const [lockPath, entry] of Object.entries(packages)) {
      const name = packageName(lockPath);
      if (!lockPath) continue;
      if (entry.hasInstallScript && !(name in INSTALL_SCRIPTS_REVIEWED))
        problems.push({
          where: "package-lock.json",
          path: lockPath,
          message: `${name} runs an install script: check it installs and works on linux/arm64 without a compiler, then add it to INSTALL_SCRIPTS_REVIEWED (deploy/validate/src/platforms.ts)`,
        });
      if (entry.os?.includes("linux") && entry.cpu?.includes("x64") && !entry.cpu.includes("arm64")) {
        const arm = name.replace(/x64/, "arm64");
        if (!names.has(arm))
          problems.push({
            where: "package-lock.json",
            path: lockPath,
            message: `${name} is for linux-x64, and the lock has no ${arm} beside it`,
          });
      }
    }
    checked.push("package-lock.json (platform packages, install scripts)");
  }
  return { checked, problems };
}
