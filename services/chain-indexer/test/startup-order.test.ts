import { startServiceMain } from "@humanpass/testing";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "./harness.ts";

/** The start-up steps a logger saw (libs/service logs each as it completes), in order. */
function stepsOf(lines: string[]): string[] {
  return lines.flatMap((line) => {
    try {
      const step = (JSON.parse(line) as { step?: unknown }).step;
      return typeof step === "string" ? [step] : [];
    } catch {
      return [];
    }
  });
}

/** Migrations run beside the streams wait; the relay starts only once both are done. */
const withoutMigrations = (steps: string[]) => steps.filter((s) => s !== "migrations");

let stack: Stack;
const harnessLines: string[] = [];

beforeAll(async () => {
  const logger = pino({ level: "debug" }, { write: (line: string) => harnessLines.push(line) });
  stack = await startStack("chain_indexer_startup", { logger });
}, 120_000);

afterAll(async () => {
  await stack?.close();
});

describe("start-up order", () => {
  it("is the service's own in the test harness: streams found, then the relay started", async () => {
    const harness = stepsOf(harnessLines);
    expect(withoutMigrations(harness)).toEqual(["streams", "relay"]);
    expect(harness.indexOf("migrations")).toBeLessThan(harness.indexOf("relay"));

    const serviceLines: string[] = [];
    const service = await startServiceMain(
      "chain-indexer",
      {
        DATABASE_URL: stack.database.url,
        EVENTS_PREFIX: stack.topology.prefix,
        RPC_URL: stack.devnet.rpcUrl,
        CHAIN_ID: String(stack.devnet.chainId),
        ATTESTATION_REGISTRY_ADDRESS: stack.devnet.addresses.attestationRegistry,
        SCHEMA_REGISTRY_ADDRESSES: stack.devnet.addresses.schemaRegistry,
        LOG_LEVEL: "debug",
      },
      { log: (line) => serviceLines.push(line) },
    );
    expect(await service.stop()).toBe(0);
    const deployed = stepsOf(serviceLines);
    expect(withoutMigrations(deployed)).toEqual(withoutMigrations(harness));
    expect(deployed.indexOf("migrations")).toBeLessThan(deployed.indexOf("relay"));
  }, 120_000);
});
