/**
 * A client that hangs up while its paid request is being served: on a route with side effects (POST, PUT,
 * PATCH, DELETE) the upstream ran, so the payment stands; on a GET nothing happened, so nothing is charged.
 * A route with side effects is paid before its upstream sees the request, so a failing upstream is paid too.
 */
import type { IncomingMessage } from "node:http";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createMetrics } from "@humanpass/telemetry";
import { eventually, sampleValue } from "@humanpass/testing";
import { x402Client } from "@x402/core/client";
import { decodePaymentResponseHeader } from "@x402/core/http";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import type { Address, Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { humanTierOnlyFetch } from "./support/agents.ts";
import { demoRoute, type Gateway, humanTier, type Stack, standardTier, startStack } from "./support/stack.ts";

const PRICE = 10_000n;
const HUMAN_PRICE = 1_000n;

let stack: Stack;
let gateway: Gateway;
const metrics = createMetrics({ serviceName: "payment-gateway" });
let upstream: Server;
const upstreamRequests: string[] = [];
let upstreamReached = signal();
let upstreamRelease = signal();
let paidConnectionClosed: Promise<void> = Promise.resolve();

function signal() {
  let resolve = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

beforeAll(async () => {
  stack = await startStack("pg_disconnects");
  upstream = createServer((request, response) => {
    upstreamRequests.push(`${request.method} ${request.url}`);
    if (request.url === "/broken") {
      response.writeHead(503, { "content-type": "application/json" }).end('{"error":"down"}');
      return;
    }
    upstreamReached.resolve();
    void upstreamRelease.promise.then(() =>
      response.writeHead(200, { "content-type": "application/json" }).end('{"done":true}'),
    );
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  const proxied = (method: "GET" | "POST" | "DELETE", path: string) => ({
    ...demoRoute(path, [standardTier(stack.network, PRICE.toString())], { method }),
    demo: undefined,
    upstream: { url: `${upstreamUrl}${path}` },
  });
  gateway = await stack.startGateway({
    routes: [
      proxied("POST", "/orders"),
      proxied("DELETE", "/orders"),
      proxied("GET", "/orders"),
      {
        ...proxied("POST", "/broken"),
        accepts: [humanTier(stack.network, HUMAN_PRICE.toString(), { maxUse: 2, scope: "broken" })],
      },
    ],
    metrics,
  });
  // The gateway's side of the paid request's connection: the test waits until the gateway has seen the hang-up.
  gateway.app.server.on("request", (request: IncomingMessage) => {
    if (!request.headers["payment-signature"]) return;
    paidConnectionClosed = new Promise((resolve) => request.socket.once("close", () => resolve()));
  });
});

afterAll(async () => {
  await new Promise((resolve) => upstream?.close(resolve));
  await stack?.close();
});

/**
 * Pays for `method /orders` with an x402 client that hangs up once the upstream has the request, and lets the
 * upstream answer only after the gateway has seen the connection close.
 */
async function payAndHangUp(agentIndex: number, method: string): Promise<Address> {
  const key = stack.agentKey(agentIndex);
  const payer = privateKeyToAccount(key).address;
  upstreamReached = signal();
  upstreamRelease = signal();
  const abort = new AbortController();
  const hangingUp = (input: string | URL | Request, init?: RequestInit) => {
    const request = new Request(input, init);
    return request.headers.get("payment-signature")
      ? fetch(request, { signal: abort.signal })
      : fetch(request);
  };
  const client = new x402Client().setSpendControls({
    allowedAssets: [{ network: stack.network, asset: stack.devnet.addresses.usdc }],
  });
  registerExactEvmScheme(client, { signer: privateKeyToAccount(key) });
  const body = method === "GET" ? undefined : JSON.stringify({ item: "book", quantity: 1 });
  const attempt = wrapFetchWithPayment(hangingUp, client)(`${gateway.url}/orders`, {
    method,
    body,
    headers: body ? { "content-type": "application/json" } : {},
  });

  await upstreamReached.promise;
  abort.abort();
  await expect(attempt).rejects.toThrow();
  await paidConnectionClosed;
  upstreamRelease.resolve();
  return payer;
}

/** The gateway's last word on `payer`'s payment: `payment_settled` or `payment_failed`. */
function outcomeFor(payer: Address) {
  return eventually(() =>
    stack.events.find(
      (e) => (e.type === "payment_settled" || e.type === "payment_failed") && e.data.payer === payer,
    ),
  );
}

describe("a client that hangs up during a paid request", () => {
  it("to a POST is charged: the upstream ran the order", async () => {
    const before = await stack.usdcBalance(privateKeyToAccount(stack.agentKey(1)).address);
    const runs = upstreamRequests.length;

    const payer = await payAndHangUp(1, "POST");

    expect(upstreamRequests.slice(runs)).toEqual(["POST /orders"]);
    const outcome = await outcomeFor(payer);
    expect(outcome.type).toBe("payment_settled");
    expect(outcome.data).toMatchObject({ resource: `${gateway.url}/orders`, amount: PRICE.toString() });
    expect(await stack.usdcBalance(payer)).toBe(before - PRICE);
  });

  it("to a DELETE is charged: the upstream ran the deletion", async () => {
    const before = await stack.usdcBalance(privateKeyToAccount(stack.agentKey(2)).address);

    const payer = await payAndHangUp(2, "DELETE");

    expect((await outcomeFor(payer)).type).toBe("payment_settled");
    expect(await stack.usdcBalance(payer)).toBe(before - PRICE);
  });

  it("to a GET is not charged: nothing happened that it did not get", async () => {
    const before = await stack.usdcBalance(privateKeyToAccount(stack.agentKey(3)).address);

    const payer = await payAndHangUp(3, "GET");

    const outcome = await outcomeFor(payer);
    expect(outcome.type).toBe("payment_failed");
    expect(outcome.data).toMatchObject({ stage: "handler" });
    expect(await stack.usdcBalance(payer)).toBe(before);
    expect(
      sampleValue(await metrics.render(), "humanpass_payment_gateway_payments_total", {
        route: "/orders",
        outcome: "not_charged_disconnect",
      }),
    ).toBe(1);
  });
});

describe("a paid POST whose upstream fails", () => {
  it("is charged, says so in PAYMENT-RESPONSE, and gives the human's use back", async () => {
    const key = stack.agentKey(4);
    const payer = privateKeyToAccount(key).address;
    await stack.attestations.pairAgent(
      payer,
      privateKeyToAccount(`0x${"44".repeat(32)}` as Hex).address,
      "4004",
    );
    const before = await stack.usdcBalance(payer);

    const response = await humanTierOnlyFetch(key, {
      network: stack.network,
      usdc: stack.devnet.addresses.usdc,
    })(`${gateway.url}/broken`, {
      method: "POST",
      body: "{}",
      headers: { "content-type": "application/json" },
    });

    expect(response.status).toBe(503);
    expect(decodePaymentResponseHeader(response.headers.get("payment-response") as string)).toMatchObject({
      success: true,
      payer,
    });
    expect(await stack.usdcBalance(payer)).toBe(before - HUMAN_PRICE);
    expect(await stack.storage.count("4004", "broken")).toBe(0);
  });
});
