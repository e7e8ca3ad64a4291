import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { renderConfigTables, withConfigTables } from "./config-docs.ts";
import { repoPath } from "./paths.ts";

describe("docs/deploy.md", () => {
  it("lists every service's configuration as its config schema defines it (regenerate: npm run docs -w @humanpass/deploy-validate)", async () => {
    const markdown = readFileSync(repoPath("docs/deploy.md"), "utf8");
    expect(markdown).toBe(await withConfigTables(markdown));
  });

  it("has a section per service with its required variables marked", async () => {
    const tables = await renderConfigTables();
    for (const service of [
      "verifier",
      "chain-indexer",
      "attestations-api",
      "agent-auth",
      "payment-gateway",
    ]) {
      expect(tables).toContain(`### ${service}\n`);
    }
    expect(tables).toMatch(/\| `HOST_URL` \| \*\*required\*\* \|/);
    expect(tables).toMatch(/\| `DATABASE_URL` \| `postgres:\/\/postgres@127\.0\.0\.1:5432\/humanpass` \|/);
    expect(tables).not.toContain(repoPath(""));
  });
});
