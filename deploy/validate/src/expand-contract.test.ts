import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { migrations as agentAuth } from "@humanpass/agent-auth";
import { migrations as attestationsApi } from "@humanpass/attestations-api";
import { migrations as chainIndexer } from "@humanpass/chain-indexer";
import type { ContractMigration, Migration } from "@humanpass/db";
import { migrations as paymentGateway } from "@humanpass/payment-gateway";
import { migrations as verifier } from "@humanpass/verifier";
import { migrations as webhooks } from "@humanpass/webhooks";
import { describe, expect, it } from "vitest";
import { expandContractProblems, type ServiceMigrations } from "./expand-contract.ts";
import { REPO_ROOT } from "./paths.ts";

// Released with the code change that stopped using the inbox, before this check existed.
const SHIPPED_BEFORE_THE_RULE = new Set(["agent-auth/0003_drop_inbox", "payment-gateway/0004_drop_inbox"]);

function serviceMigrations(service: string, migrations: Record<string, Migration>): ServiceMigrations {
  const dir = path.join(REPO_ROOT, "services", service);
  const src = path.join(dir, "src");
  const code = readdirSync(src, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts") && !f.startsWith(path.join("db", "migrations")))
    .map((f) => readFileSync(path.join(src, f), "utf8"))
    .join("\n");
  const { version } = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"));
  return { service, version, migrations, code };
}

const additive: Migration = { up: async (db) => void (await db.schema.createTable("t").execute()) };
const dropping: Migration = { up: async (db) => void (await db.schema.dropTable("old_claims").execute()) };
const contract = (unusedSince: string): ContractMigration => ({
  ...dropping,
  contract: { removes: ["old_claims"], unusedSince },
});
const one = (migrations: Record<string, Migration>, code = ""): ServiceMigrations[] => [
  { service: "svc", version: "1.3.0", migrations, code },
];

describe("expand → contract", () => {
  it("holds for every service's migrations", () => {
    const services = [
      serviceMigrations("verifier", verifier),
      serviceMigrations("chain-indexer", chainIndexer),
      serviceMigrations("attestations-api", attestationsApi),
      serviceMigrations("agent-auth", agentAuth),
      serviceMigrations("payment-gateway", paymentGateway),
      serviceMigrations("webhooks", webhooks),
    ];
    expect(expandContractProblems(services, SHIPPED_BEFORE_THE_RULE)).toEqual([]);
  });

  it("refuses a drop that does not declare what it removes and since when", () => {
    expect(expandContractProblems(one({ "0001_t": additive, "0002_drop": dropping }), new Set())).toEqual([
      "svc/0002_drop drops or renames without declaring what and since when it is unused (contract)",
    ]);
  });

  it("refuses a drop in the release that stopped using the table, accepts it one release later", () => {
    expect(expandContractProblems(one({ "0002_drop": contract("1.3.0") }), new Set())).toEqual([
      "svc/0002_drop removes old_claims in release 1.3.0, which is not after the release that stopped using it " +
        "(1.3.0): ship the code change first, the migration in a later release",
    ]);
    expect(expandContractProblems(one({ "0002_drop": contract("1.2.4") }), new Set())).toEqual([]);
  });

  it("refuses a drop of a table the code still names", () => {
    const code = "await db.selectFrom('old_claims').selectAll().execute();";
    expect(expandContractProblems(one({ "0002_drop": contract("1.2.0") }, code), new Set())).toEqual([
      "svc/0002_drop removes old_claims, which the code still names",
    ]);
  });
});
