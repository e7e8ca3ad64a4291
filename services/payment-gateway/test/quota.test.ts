/**
 * Per-human quotas (`extra.maxUse`) under concurrency across gateway processes, and given back on every path
 * where a payment fails after the quota was taken.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { eventually, type ServiceProcess } from "@humanpass/testing";
import type { FacilitatorClient } from "@x402/core/server";
import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { humanTierOnlyFetch, paymentError, settlementOf } from "./support/agents.ts";
import { startGatewayProcess } from "./support/gateway-process.ts";
import {
  demoRoute,
  type Gateway,
  humanTier,
  SETTLER_ACCOUNTS,
  type Stack,
  standardTier,
  startStack,
} from "./support/stack.ts";

let stack: Stack;
const processes: ServiceProcess[] = [];
let failingUpstream: Server;

const human = (n: number) => privateKeyToAccount(`0x${n.toString(16).padStart(64, "0")}` as Hex).address;

beforeAll(async () => {
  stack = await startStack("pg_quota");
  failingUpstream = createServer((_req, res) => {
    res.writeHead(500, { "content-type": "application/json" }).end('{"error":"upstream broke"}');
  });
  failingUpstream.listen(0, "127.0.0.1");
});

afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop()));
  failingUpstream?.close();
  await stack?.close();
});

describe("maxUse under concurrency", () => {
  it("200 concurrent human-tier requests of one human over two gateway processes settle exactly maxUse of them", async () => {
    const agentKey = stack.agentKey(8);
    const agent = privateKeyToAccount(agentKey).address;
    await stack.attestations.pairAgent(agent, human(801), "8001");
    const routesFile = stack.writeRoutesFile([
      demoRoute("/burst", [
        standardTier(stack.network, "10000"),
        humanTier(stack.network, "1000", { maxUse: 5, scope: "burst" }),
      ]),
    ]);
    const started = await Promise.all(
      SETTLER_ACCOUNTS.map((settler) =>
        startGatewayProcess({
          DATABASE_URL: stack.database.url,
          EVENTS_PREFIX: stack.topology.prefix,
          EVM_ADDRESS: stack.payTo,
          FACILITATOR_URL: "local",
          FACILITATOR_RPC_URL: stack.devnet.rpcUrl,
          FACILITATOR_PRIVATE_KEY: stack.devnet.accounts[settler].privateKey,
          ROUTES_FILE: routesFile,
          ATTESTATIONS_API_URL: stack.attestations.url,
          // 200 requests at once on a shared 2-core machine: slow answers are expected here, not failures.
          ATTESTATIONS_API_TIMEOUT_MS: "30000",
          DB_POOL_MAX: "20",
        }),
      ),
    );
    processes.push(...started);
    const before = await stack.usdcBalance(agent);
    const pay = humanTierOnlyFetch(agentKey, { network: stack.network, usdc: stack.devnet.addresses.usdc });

    const responses = await Promise.all(
      Array.from({ length: 200 }, (_, i) => pay(`${processes[i % 2].url}/burst`)),
    );

    const outcomes: Record<string, number> = {};
    for (const r of responses) {
      const key = r.status === 200 ? "settled" : `${r.status} ${paymentError(r) ?? (await r.text())}`;
      outcomes[key] = (outcomes[key] ?? 0) + 1;
    }
    expect(outcomes).toEqual({ settled: 5, "402 max_use_exceeded": 195 });
    const settled = responses.filter((r) => r.status === 200);
    expect(settled.every((r) => settlementOf(r)?.success === true)).toBe(true);
    expect(new Set(responses.map((r) => new URL(r.url).port)).size).toBe(2);
    expect(await stack.storage.count("8001", "burst")).toBe(5);
    expect(await stack.usdcBalance(agent)).toBe(before - 5n * 1000n);
    await eventually(() =>
      stack.events.find(
        (e) =>
          e.type === "max_use_exceeded" &&
          e.data.humanId === "8001" &&
          e.data.maxUse === 5 &&
          e.data.scope === "burst",
      ),
    );
    await eventually(
      () =>
        stack.events.filter((e) => e.type === "payment_settled" && e.data.humanId === "8001").length === 5,
    );
  });
});

describe("a failed payment does not consume quota", () => {
  const wrap = (overrides: Partial<FacilitatorClient>): FacilitatorClient => ({
    verify: (p, r) => stack.facilitator.verify(p, r),
    settle: (p, r) => stack.facilitator.settle(p, r),
    getSupported: () => stack.facilitator.getSupported(),
    ...overrides,
  });
  let agentKey: Hex;
  let brokeAgentKey: Hex;
  const HUMAN_ID = "9001";
  const SCOPE = "fragile";

  function routes() {
    const upstream = `http://127.0.0.1:${(failingUpstream.address() as AddressInfo).port}/report`;
    const tiers = [humanTier(stack.network, "1000", { maxUse: 1, scope: SCOPE })];
    return [
      demoRoute("/fragile", tiers),
      { ...demoRoute("/proxied", tiers), demo: undefined, upstream: { url: upstream } },
    ];
  }

  /** The payments of `key` claimed (with the proof's admission, or after verify) and not given back. */
  async function claimsOf(key: Hex): Promise<number> {
    const payer = privateKeyToAccount(key).address.toLowerCase();
    return (
      await stack.db.selectFrom("payment_reservations").select("nonce").where("payer", "=", payer).execute()
    ).length;
  }

  async function payOnce(gateway: Gateway, path = "/fragile", key = agentKey) {
    const agent = privateKeyToAccount(key).address;
    const before = await stack.usdcBalance(agent);
    const response = await humanTierOnlyFetch(key, {
      network: stack.network,
      usdc: stack.devnet.addresses.usdc,
    })(`${gateway.url}${path}`);
    return { response, charged: before - (await stack.usdcBalance(agent)) };
  }

  beforeAll(async () => {
    agentKey = stack.agentKey(9);
    // Devnet account 15 holds no test USDC: the facilitator finds its payments invalid.
    brokeAgentKey = stack.agentKey(15);
    await stack.attestations.pairAgent(privateKeyToAccount(agentKey).address, human(901), HUMAN_ID);
    await stack.attestations.pairAgent(privateKeyToAccount(brokeAgentKey).address, human(901), HUMAN_ID);
  });

  it("when the facilitator answers invalid", async () => {
    const gateway = await stack.startGateway({ routes: routes() });
    const { response, charged } = await payOnce(gateway, "/fragile", brokeAgentKey);
    expect(response.status).toBe(402);
    expect(paymentError(response)).not.toBe("max_use_exceeded");
    expect(charged).toBe(0n);
    expect(await stack.storage.count(HUMAN_ID, SCOPE)).toBe(0);
    // Its authorization was claimed with the proof's admission, and given back: a valid payment may still use it.
    expect(await claimsOf(brokeAgentKey)).toBe(0);
    await eventually(() =>
      stack.events.find(
        (e) => e.type === "payment_failed" && e.data.stage === "verify" && e.data.humanId === HUMAN_ID,
      ),
    );
  });

  it("when verification throws", async () => {
    const gateway = await stack.startGateway({
      routes: routes(),
      facilitator: wrap({
        verify: async () => {
          throw new Error("facilitator crashed");
        },
      }),
    });
    const { response, charged } = await payOnce(gateway);
    expect(response.status).toBe(402);
    expect(paymentError(response)).toBe("facilitator crashed");
    expect(charged).toBe(0n);
    expect(await stack.storage.count(HUMAN_ID, SCOPE)).toBe(0);
    expect(await claimsOf(agentKey)).toBe(0);
  });

  it("when settlement fails", async () => {
    const gateway = await stack.startGateway({
      routes: routes(),
      facilitator: wrap({
        settle: async (_payload, requirements) => ({
          success: false,
          errorReason: "transaction_reverted",
          transaction: "",
          network: requirements.network,
        }),
      }),
    });
    const { response, charged } = await payOnce(gateway);
    expect(response.status).toBe(402);
    expect(settlementOf(response)).toMatchObject({ success: false, errorReason: "transaction_reverted" });
    expect(await response.json()).toEqual({ error: "settlement_failed", reason: "transaction_reverted" });
    expect(charged).toBe(0n);
    expect(await stack.storage.count(HUMAN_ID, SCOPE)).toBe(0);
    await eventually(() =>
      stack.events.find(
        (e) => e.type === "payment_failed" && e.data.stage === "settle" && e.data.humanId === HUMAN_ID,
      ),
    );
  });

  it("when settlement throws", async () => {
    const gateway = await stack.startGateway({
      routes: routes(),
      facilitator: wrap({
        settle: async () => {
          throw new Error("RPC node unreachable");
        },
      }),
    });
    const { response, charged } = await payOnce(gateway);
    expect(response.status).toBe(402);
    expect(settlementOf(response)).toMatchObject({ success: false });
    // The facilitator's reason is prose here, not a code: the body names the failure alone.
    expect(await response.json()).toEqual({ error: "settlement_failed" });
    expect(charged).toBe(0n);
    expect(await stack.storage.count(HUMAN_ID, SCOPE)).toBe(0);
  });

  it("when the handler fails after verification", async () => {
    const gateway = await stack.startGateway({ routes: routes() });
    const { response, charged } = await payOnce(gateway, "/proxied");
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({ error: "upstream broke" });
    expect(response.headers.get("payment-response")).toBeNull();
    expect(charged).toBe(0n);
    expect(await stack.storage.count(HUMAN_ID, SCOPE)).toBe(0);
    await eventually(() =>
      stack.events.find(
        (e) =>
          e.type === "payment_failed" && e.data.stage === "handler" && e.data.reason === "handler_failed:500",
      ),
    );
  });

  it("and the one use is still there afterwards", async () => {
    const gateway = await stack.startGateway({ routes: routes() });
    const first = await payOnce(gateway);
    expect(first.response.status).toBe(200);
    expect(first.charged).toBe(1000n);
    const second = await payOnce(gateway);
    expect(paymentError(second.response)).toBe("max_use_exceeded");
    expect(await stack.storage.count(HUMAN_ID, SCOPE)).toBe(1);
  });
});
