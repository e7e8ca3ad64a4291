/** Concurrent copies of one payment: the handler and its upstream run once, the payer is charged once. */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { extractHumanProofChallenge, signHumanProofChallengeEVMUnchecked } from "@humanpass/human-proof";
import { createMockFacilitatorClient } from "@humanpass/x402-fastify";
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import type { FacilitatorClient } from "@x402/core/server";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { humanSigner, paymentError } from "./support/agents.ts";
import { demoRoute, type Gateway, humanTier, type Stack, standardTier, startStack } from "./support/stack.ts";

let stack: Stack;
let gateway: Gateway;
let permit2Gateway: Gateway;
let upstream: Server;
let upstreamUrl: string;
let upstreamHits = 0;
const facilitatorCalls: string[] = [];

beforeAll(async () => {
  stack = await startStack("pg_duplicates");
  upstream = createServer((_request, response) => {
    upstreamHits++;
    // Slow enough that every copy is verified while the first is still being served.
    setTimeout(() => response.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}'), 200);
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/data`;
  const routes = [
    {
      ...demoRoute("/data", [standardTier(stack.network, "10000")]),
      demo: undefined,
      upstream: { url: upstreamUrl },
    },
    {
      ...demoRoute("/data", [standardTier(stack.network, "10000")], { method: "POST" }),
      demo: undefined,
      upstream: { url: upstreamUrl },
    },
  ];
  gateway = await stack.startGateway({ routes });
  // The devnet has no Permit2 contract, so its facilitator refuses every Permit2 payment by itself. This one
  // accepts them, as a facilitator on a chain with Permit2 does: the gateway has to refuse them on its own.
  const accepting = createMockFacilitatorClient({ kinds: [{ network: stack.network, scheme: "exact" }] });
  const permit2Facilitator: FacilitatorClient = {
    getSupported: () => accepting.getSupported(),
    verify: (payload, requirements) => {
      facilitatorCalls.push("verify");
      return accepting.verify(payload, requirements);
    },
    settle: (payload, requirements) => {
      facilitatorCalls.push("settle");
      return accepting.settle(payload, requirements);
    },
  };
  permit2Gateway = await stack.startGateway({ routes, facilitator: permit2Facilitator });
});

afterAll(async () => {
  await new Promise((resolve) => upstream?.close(resolve));
  await stack?.close();
});

/** One payment signed by agent `index` for `method /data`, as the header an x402 client sends. */
async function paymentHeader(index: number, method: string): Promise<string> {
  const url = `${gateway.url}/data`;
  const required = decodePaymentRequiredHeader(
    (await fetch(url, { method })).headers.get("payment-required") as string,
  );
  const client = new x402Client().setSpendControls({
    allowedAssets: [{ network: stack.network, asset: stack.devnet.addresses.usdc }],
  });
  registerExactEvmScheme(client, { signer: privateKeyToAccount(stack.agentKey(index)) });
  return encodePaymentSignatureHeader(await client.createPaymentPayload(required));
}

describe("one payment sent ten times at once", () => {
  it("runs the handler and the upstream once, is charged once, and the copies are refused", async () => {
    const url = `${gateway.url}/data`;
    const payer = privateKeyToAccount(stack.agentKey(5)).address;
    const before = await stack.usdcBalance(payer);
    const header = await paymentHeader(5, "GET");
    const hitsBefore = upstreamHits;

    const responses = await Promise.all(
      Array.from({ length: 10 }, () => fetch(url, { headers: { "payment-signature": header } })),
    );

    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 402, 402, 402, 402, 402, 402, 402, 402, 402]);
    expect(responses.filter((r) => r.status === 402).map(paymentError)).toEqual(
      Array(9).fill("duplicate_payment"),
    );
    expect(upstreamHits).toBe(hitsBefore + 1);
    expect(await stack.usdcBalance(payer)).toBe(before - 10_000n);
  });
});

describe("one payment for a POST sent ten times at once", () => {
  it("settles once before the handler, runs the upstream once, and the copies are refused", async () => {
    const payer = privateKeyToAccount(stack.agentKey(7)).address;
    const before = await stack.usdcBalance(payer);
    const header = await paymentHeader(7, "POST");
    const hitsBefore = upstreamHits;

    const responses = await Promise.all(
      Array.from({ length: 10 }, () =>
        fetch(`${gateway.url}/data`, { method: "POST", headers: { "payment-signature": header } }),
      ),
    );

    expect(responses.map((r) => r.status).sort()).toEqual([200, 402, 402, 402, 402, 402, 402, 402, 402, 402]);
    const refusals = await Promise.all(responses.filter((r) => r.status === 402).map((r) => r.json()));
    expect(refusals).toEqual(Array(9).fill({ error: "settlement_failed", reason: "duplicate_payment" }));
    expect(upstreamHits).toBe(hitsBefore + 1);
    expect(await stack.usdcBalance(payer)).toBe(before - 10_000n);
  });
});

describe("one human-tier payment sent ten times at once, each copy with a proof of its own", () => {
  it("runs the upstream once, charges once, takes one use, and refuses the copies as duplicates", async () => {
    const key = stack.agentKey(8);
    const agent = privateKeyToAccount(key).address;
    await stack.attestations.pairAgent(agent, privateKeyToAccount(stack.agentKey(9)).address, "8801");
    const tier = humanTier(stack.network, "1000", { maxUse: 100, scope: "copies" });
    const human = await stack.startGateway({
      routes: [{ ...demoRoute("/human", [tier]), demo: undefined, upstream: { url: upstreamUrl } }],
    });
    const url = `${human.url}/human`;
    const terms = async () =>
      decodePaymentRequiredHeader((await fetch(url)).headers.get("payment-required") as string);
    const client = new x402Client().setSpendControls({
      allowedAssets: [{ network: stack.network, asset: stack.devnet.addresses.usdc }],
    });
    registerExactEvmScheme(client, { signer: privateKeyToAccount(key) });
    const payment = await client.createPaymentPayload(await terms());
    // The same authorization ten times; each copy answers a challenge of its own, so no proof is a replay.
    const headers = await Promise.all(
      Array.from({ length: 10 }, async () => {
        const challenge = extractHumanProofChallenge(await terms());
        if (!challenge) throw new Error("no human-proof challenge in the terms");
        const proof = await signHumanProofChallengeEVMUnchecked(challenge, humanSigner(key), stack.network);
        return encodePaymentSignatureHeader({
          ...payment,
          extensions: { ...payment.extensions, "human-proof": proof },
        });
      }),
    );
    const before = await stack.usdcBalance(agent);
    const hitsBefore = upstreamHits;

    const responses = await Promise.all(
      headers.map((header) => fetch(url, { headers: { "payment-signature": header } })),
    );

    expect(responses.map((r) => r.status).sort()).toEqual([200, 402, 402, 402, 402, 402, 402, 402, 402, 402]);
    expect(responses.filter((r) => r.status === 402).map(paymentError)).toEqual(
      Array(9).fill("duplicate_payment"),
    );
    expect(upstreamHits).toBe(hitsBefore + 1);
    expect(await stack.usdcBalance(agent)).toBe(before - 1_000n);
    expect(await stack.storage.count("8801", "copies")).toBe(1);
  });
});

describe("one Permit2 payment sent ten times at once", () => {
  it("is refused every time, as no tier offers Permit2: the upstream never runs and no facilitator is asked", async () => {
    const url = `${permit2Gateway.url}/data`;
    const key = stack.agentKey(6);
    const required = decodePaymentRequiredHeader(
      (await fetch(url)).headers.get("payment-required") as string,
    );
    const client = new x402Client().setSpendControls({
      allowedAssets: [{ network: stack.network, asset: stack.devnet.addresses.usdc }],
    });
    registerExactEvmScheme(client, { signer: privateKeyToAccount(key) });
    // x402's client signs Permit2 when the terms ask for it; the copy sent claims the terms actually offered.
    const offered = required.accepts[0];
    const permit2 = await client.createPaymentPayload({
      ...required,
      accepts: [{ ...offered, extra: { ...offered.extra, assetTransferMethod: "permit2" } }],
    });
    expect(permit2.payload).toHaveProperty("permit2Authorization");
    const header = encodePaymentSignatureHeader({ ...permit2, accepted: offered });
    const hitsBefore = upstreamHits;

    const responses = await Promise.all(
      Array.from({ length: 10 }, () => fetch(url, { headers: { "payment-signature": header } })),
    );

    expect(responses.map((r) => r.status)).toEqual(Array(10).fill(402));
    expect(responses.map(paymentError)).toEqual(Array(10).fill("unsupported_payload_type"));
    expect(upstreamHits).toBe(hitsBefore);
    expect(facilitatorCalls).toEqual([]);
  });
});
