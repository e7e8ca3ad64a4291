import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import manifest from "../../package.json" with { type: "json" };
import { findX402Packages, X402_CORE_RANGE, x402VersionProblems } from "./x402-versions.ts";

let app: string;

/** An installed package as npm lays it out: its manifest and an entry point `require` resolves. */
function install(dir: string, name: string, version: string) {
  const packageDir = path.join(dir, "node_modules", ...name.split("/"));
  mkdirSync(packageDir, { recursive: true });
  writeFileSync(path.join(packageDir, "package.json"), JSON.stringify({ name, version, main: "index.js" }));
  writeFileSync(path.join(packageDir, "index.js"), "");
  return packageDir;
}

beforeAll(() => {
  app = mkdtempSync(path.join(tmpdir(), "x402-versions-"));
  install(app, "@x402/core", "2.27.0");
  install(app, "@x402/fetch", "2.27.0");
  // What `npm install @x402/axios` (latest 2.11.0) leaves beside our peer range: its own older core under it.
  install(install(app, "@x402/axios", "2.11.0"), "@x402/core", "2.11.0");
});
afterAll(() => rmSync(app, { recursive: true, force: true }));

describe("x402 versions", () => {
  it("names each package outside the range with its version and place, and the copies of @x402/core", () => {
    const found = findX402Packages([app]);
    expect(found.map((p) => `${p.name}@${p.version}`).sort()).toEqual([
      "@x402/axios@2.11.0",
      "@x402/core@2.11.0",
      "@x402/core@2.27.0",
      "@x402/fetch@2.27.0",
    ]);
    const axiosDir = path.join("node_modules", "@x402", "axios");
    expect(x402VersionProblems(found, "^2.23.0", app)).toEqual([
      `@x402/axios 2.11.0 (${axiosDir}) is outside ^2.23.0`,
      `@x402/core 2.11.0 (${path.join(axiosDir, "node_modules", "@x402", "core")}) is outside ^2.23.0`,
      `2 copies of @x402/core are installed: 2.27.0 (${path.join("node_modules", "@x402", "core")}), 2.11.0 (${path.join(axiosDir, "node_modules", "@x402", "core")})`,
    ]);
  });

  it("finds nothing wrong with packages within the range, nor with this workspace's", () => {
    const found = findX402Packages([app]).filter((p) => p.version === "2.27.0");
    expect(x402VersionProblems(found, "^2.23.0", app)).toEqual([]);
    expect(x402VersionProblems(findX402Packages([process.cwd()]), "^2.23.0", process.cwd())).toEqual([]);
  });

  it("checks against the peer range package.json declares", () => {
    expect(X402_CORE_RANGE).toBe(manifest.peerDependencies["@x402/core"]);
  });
});
