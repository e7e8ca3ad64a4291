import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { imageProblems } from "./images";
import { REPO_ROOT, repoPath } from "./paths";

describe("service images", () => {
  const copies: string[] = [];
  afterAll(() => {
    for (const dir of copies) rmSync(dir, { recursive: true, force: true });
  });

  it("every service Dockerfile runs the locked tsx, as node, on code owned by root", () => {
    const { checked, problems } = imageProblems(REPO_ROOT);
    expect(checked).toEqual([
      "services/agent-auth/Dockerfile",
      "services/attestations-api/Dockerfile",
      "services/chain-indexer/Dockerfile",
      "services/payment-gateway/Dockerfile",
      "services/verifier/Dockerfile",
    ]);
    expect(problems).toEqual([]);
  });

  it("names a Dockerfile that drifted: another tsx, code owned by node", () => {
    const root = mkdtempSync(path.join(tmpdir(), "humanpass-images-"));
    copies.push(root);
    cpSync(repoPath("package-lock.json"), path.join(root, "package-lock.json"));
    cpSync(repoPath("services"), path.join(root, "services"), {
      recursive: true,
      filter: (src) => !src.includes("node_modules"),
    });
    const file = path.join(root, "services/chain-indexer/Dockerfile");
    const text = readFileSync(file, "utf8");
    writeFileSync(
      file,
      text
        .replace(/tsx@\S+/, "tsx@4.0.0")
        .replace("--chown=root:root /app /app", "--chown=node:node /app /app"),
    );
    const { problems } = imageProblems(root);
    expect(problems.map((p) => `${p.where} ${p.path}`)).toEqual([
      "services/chain-indexer/Dockerfile tsx",
      "services/chain-indexer/Dockerfile COPY /app",
    ]);
    expect(problems[0]!.message).toMatch(/installs tsx@4\.0\.0, package-lock\.json has tsx@\d/);
  });
});
