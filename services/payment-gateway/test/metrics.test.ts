import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { cachePositiveLookups, createPoUVerifier } from "@humanpass/human-proof";
import { createMetrics } from "@humanpass/telemetry";
import { sampleValue, unboundedLabels } from "@humanpass/testing";
import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { countedLookups } from "../src/metrics.ts";
import { agentFetch, humanAgentFetch } from "./support/agents.ts";
import { demoRoute, type Gateway, humanTier, type Stack, standardTier, startStack } from "./support/stack.ts";

let stack: Stack;
let gateway: Gateway;
let failingUpstream: Server;
const metrics = createMetrics({ serviceName: "payment-gateway" });
const human = (n: number) => privateKeyToAccount(`0x${n.toString(16).padStart(64, "0")}` as Hex).address;

beforeAll(async () => {
  stack = await startStack("pg_metrics");
  failingUpstream = createServer((_req, res) => {
    res.writeHead(500, { "content-type": "application/json" }).end('{"error":"upstream broke"}');
  });
  await new Promise<void>((resolve) => failingUpstream.listen(0, "127.0.0.1", resolve));
  const upstream = `http://127.0.0.1:${(failingUpstream.address() as AddressInfo).port}/x`;
  const { network } = stack;
  gateway = await stack.startGateway({
    routes: [
      demoRoute("/joke", [standardTier(network, "1000")]),
      demoRoute("/limited", [
        standardTier(network, "10000"),
        humanTier(network, "1000", { maxUse: 1, scope: "m" }),
      ]),
      {
        ...demoRoute("/proxied", [standardTier(network, "1000")]),
        demo: undefined,
        upstream: { url: upstream },
      },
    ],
    verifier: countedLookups(metrics.meter, stack.verifier(), (inner) =>
      cachePositiveLookups(inner, { ttlMs: 600_000 }),
    ),
    metrics,
  });
  await stack.attestations.pairAgent(privateKeyToAccount(stack.agentKey(5)).address, human(505), "5005");
});

afterAll(async () => {
  failingUpstream?.close();
  await stack?.close();
  await metrics.shutdown();
});

function options() {
  return {
    network: stack.network,
    usdc: stack.devnet.addresses.usdc,
    attestationsUrl: stack.attestations.attestationsUrl,
  };
}

describe("payment-gateway /metrics", () => {
  it("counts payments by route template, tier and outcome, settlements, and human lookups hit/miss", async () => {
    expect((await agentFetch(stack.agentKey(2), options())(`${gateway.url}/joke`)).status).toBe(200);
    // A human tier with one use: human, then max_use_exceeded and the standard tier.
    const pay = humanAgentFetch(stack.agentKey(5), options());
    expect((await pay(`${gateway.url}/limited`)).status).toBe(200);
    expect((await pay(`${gateway.url}/limited`)).status).toBe(200);
    // The upstream fails after verification: the payment is cancelled, nothing charged.
    expect((await agentFetch(stack.agentKey(2), options())(`${gateway.url}/proxied`)).status).toBe(500);

    const text = await (await fetch(`${gateway.url}/metrics`)).text();
    const payments = (route: string, tier: string, outcome: string) =>
      sampleValue(text, "humanpass_payment_gateway_payments_total", { route, tier, outcome });
    expect(payments("/joke", "standard", "settled")).toBe(1);
    expect(payments("/limited", "human", "settled")).toBe(1);
    expect(payments("/limited", "human", "max_use_exceeded")).toBe(1);
    expect(payments("/limited", "standard", "settled")).toBe(1);
    expect(payments("/proxied", "standard", "refunded")).toBe(1);
    expect(
      sampleValue(text, "humanpass_payment_gateway_settlement_duration_seconds_count", {
        outcome: "settled",
      }),
    ).toBe(3);
    expect(
      sampleValue(text, "humanpass_payment_gateway_human_lookups_total", { result: "miss" }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      sampleValue(text, "humanpass_payment_gateway_human_lookups_total", { result: "hit" }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      sampleValue(text, "http_server_request_duration_count", {
        http_route: "/joke",
        http_response_status_code: "200",
      }),
    ).toBe(1);
    // Payers, DIDs, nonces and transactions went through: none became a label.
    expect(unboundedLabels(text)).toEqual([]);
  });

  it("counts a facilitator that does not answer, by operation, and the payment as unavailable", async () => {
    const own = createMetrics({ serviceName: "payment-gateway" });
    const down = await stack.startGateway({
      routes: [demoRoute("/joke", [standardTier(stack.network, "1000")])],
      facilitator: {
        verify: async () => {
          throw new Error("facilitator down (test)");
        },
        settle: async () => {
          throw new Error("not reached");
        },
        getSupported: () => stack.facilitator.getSupported(),
      },
      verifier: createPoUVerifier({ attestationsApiUrl: stack.attestations.url }),
      metrics: own,
    });
    const response = await agentFetch(stack.agentKey(2), options())(`${down.url}/joke`);
    expect(response.status).toBe(402);
    const text = await own.render();
    expect(
      sampleValue(text, "humanpass_payment_gateway_facilitator_errors_total", { operation: "verify" }),
    ).toBe(1);
    expect(
      sampleValue(text, "humanpass_payment_gateway_payments_total", { route: "/joke", outcome: "refused" }),
    ).toBe(1);
    await own.shutdown();
  });
});
