/** Concurrent copies of one payment: the handler and its upstream run once, the payer is charged once. */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { paymentError } from "./support/agents";
import { demoRoute, type Gateway, type Stack, standardTier, startStack } from "./support/stack";

let stack: Stack;
let gateway: Gateway;
let upstream: Server;
let upstreamHits = 0;

beforeAll(async () => {
  stack = await startStack("pg_duplicates");
  upstream = createServer((_request, response) => {
    upstreamHits++;
    // Slow enough that every copy is verified while the first is still being served.
    setTimeout(() => response.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}'), 200);
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/data`;
  gateway = await stack.startGateway({
    routes: [
      {
        ...demoRoute("/data", [standardTier(stack.network, "10000")]),
        demo: undefined,
        upstream: { url: upstreamUrl },
      },
    ],
  });
});

afterAll(async () => {
  await new Promise((resolve) => upstream?.close(resolve));
  await stack?.close();
});

describe("one payment sent ten times at once", () => {
  it("runs the handler and the upstream once, is charged once, and the copies are refused", async () => {
    const url = `${gateway.url}/data`;
    const key = stack.agentKey(5);
    const payer = privateKeyToAccount(key).address;
    const before = await stack.usdcBalance(payer);
    const required = decodePaymentRequiredHeader(
      (await fetch(url)).headers.get("payment-required") as string,
    );
    const client = new x402Client().setSpendControls({
      allowedAssets: [{ network: stack.network, asset: stack.devnet.addresses.usdc }],
    });
    registerExactEvmScheme(client, { signer: privateKeyToAccount(key) });
    const header = encodePaymentSignatureHeader(await client.createPaymentPayload(required));

    const responses = await Promise.all(
      Array.from({ length: 10 }, () => fetch(url, { headers: { "payment-signature": header } })),
    );

    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 402, 402, 402, 402, 402, 402, 402, 402, 402]);
    expect(responses.filter((r) => r.status === 402).map(paymentError)).toEqual(
      Array(9).fill("duplicate_payment"),
    );
    expect(upstreamHits).toBe(1);
    expect(await stack.usdcBalance(payer)).toBe(before - 10_000n);
  });
});
