import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REPO_ROOT, repoPath } from "./paths.ts";
import { platformProblems } from "./platforms.ts";

describe("platforms", () => {
  const copies: string[] = [];
  afterAll(() => {
    for (const dir of copies) rmSync(dir, { recursive: true, force: true });
  });

  it("the images, compose and scripts name no architecture and need no Debian or root; native packages have linux-arm64 builds", () => {
    const { checked, problems } = platformProblems(REPO_ROOT);
    expect(checked).toHaveLength(2);
    expect(problems).toEqual([]);
  });

  it("names each drift: an amd64 base, a hard-coded x64, apt in an image, a linux-x64-only package, an unreviewed install script", () => {
    const root = mkdtempSync(path.join(tmpdir(), "humanpass-platforms-"));
    copies.push(root);
    writeFileSync(
      path.join(root, "Dockerfile"),
      readFileSync(repoPath("Dockerfile"), "utf8")
        .replace(/^ARG NODE_IMAGE=.*$/m, "ARG NODE_IMAGE=amd64/node:26-bookworm-slim")
        .replace(/^WORKDIR \/src$/m, "WORKDIR /src\nRUN apt-get update"),
    );
    mkdirSync(path.join(root, "scripts/compose"), { recursive: true });
    cpSync(repoPath("scripts/ensure-node.sh"), path.join(root, "scripts/ensure-node.sh"));
    writeFileSync(
      path.join(root, "scripts/compose/up.sh"),
      "#!/bin/sh\n# x64 in a comment is fine\nnode-linux-x64/bin/node\n",
    );
    writeFileSync(
      path.join(root, "package-lock.json"),
      JSON.stringify({
        packages: {
          "": {},
          "node_modules/@esbuild/linux-x64": { os: ["linux"], cpu: ["x64"], optional: true },
          "node_modules/@esbuild/linux-arm64": { os: ["linux"], cpu: ["arm64"], optional: true },
          "node_modules/only-x64/linux-x64": { os: ["linux"], cpu: ["x64"] },
          "node_modules/secp256k1": { hasInstallScript: true },
          "node_modules/new-addon": { hasInstallScript: true },
        },
      }),
    );
    const { problems } = platformProblems(root);
    expect(problems.map((p) => `${p.where} ${p.path}`)).toEqual([
      "Dockerfile line 7",
      "Dockerfile line 13",
      "Dockerfile ARG NODE_IMAGE",
      "scripts/compose/up.sh line 3",
      "package-lock.json node_modules/only-x64/linux-x64",
      "package-lock.json node_modules/new-addon",
    ]);
  });
});
