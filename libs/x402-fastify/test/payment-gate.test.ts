import { ABIs, type Devnet, startDevnet } from "@humanpass/devnet";
import { freePort } from "@humanpass/testing";
import { x402Client } from "@x402/core/client";
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  decodePaymentSignatureHeader,
} from "@x402/core/http";
import { type RouteConfig, x402HTTPResourceServer, x402ResourceServer } from "@x402/core/server";
import type { Network } from "@x402/core/types";
import { registerExactEvmScheme as registerClientScheme } from "@x402/evm/exact/client";
import { ExactEvmScheme } from "@x402/evm/exact/server";
import { wrapFetchWithPayment } from "@x402/fetch";
import Fastify, { type FastifyInstance } from "fastify";
import type { Address, Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createEvmFacilitatorClient, currentPaymentRequest, installPaymentGate } from "../src/index.ts";

const PRICE = 10_000n; // 0.01 test USDC
const PAYWALL = "<!doctype html><title>Pay first</title><h1>Pay with x402</h1>";

let devnet: Devnet;
let app: FastifyInstance;
let baseUrl: string;
let network: Network;
let payTo: Address;
const events: string[] = [];
const handlerRuns = { paid: 0 };
const logLines: string[] = [];
function signal() {
  let resolve = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}
let slowStarted = signal();

function route(paymentFlow?: "upfront"): RouteConfig {
  return {
    description: "test resource",
    mimeType: "application/json",
    accepts: {
      scheme: "exact",
      network,
      payTo,
      price: {
        amount: PRICE.toString(),
        asset: devnet.addresses.usdc,
        extra: { name: "USD Coin", version: "2" },
      },
      ...(paymentFlow ? { extra: { paymentFlow } } : {}),
    },
  };
}

function payingFetch(privateKey: Hex) {
  // The devnet token is not one of x402's default assets, so the agent opts in to it explicitly.
  const client = new x402Client().setSpendControls({
    allowedAssets: [{ network, asset: devnet.addresses.usdc }],
  });
  registerClientScheme(client, { signer: privateKeyToAccount(privateKey) });
  return wrapFetchWithPayment(fetch, client);
}

function usdcBalance(address: Address): Promise<bigint> {
  return devnet.client.readContract({
    address: devnet.addresses.usdc,
    abi: ABIs.usdc,
    functionName: "balanceOf",
    args: [address],
  }) as Promise<bigint>;
}

beforeAll(async () => {
  devnet = await startDevnet({ accounts: 8, usdcAccounts: 6 });
  network = `eip155:${devnet.chainId}`;
  payTo = devnet.accounts[7].address;
  const facilitator = createEvmFacilitatorClient({
    rpcUrl: devnet.rpcUrl,
    chain: devnet.chain,
    privateKey: devnet.accounts[6].privateKey,
  });
  const server = new x402ResourceServer(facilitator).register(network, new ExactEvmScheme());
  // Stands in for a human-proof check whose registry or database cannot answer.
  server.onBeforeVerify(async () =>
    currentPaymentRequest()?.url === "/undecided"
      ? { abort: true, reason: "verification_unavailable" }
      : undefined,
  );
  server.onVerifiedPaymentCanceled(async (context) => {
    events.push(`canceled:${context.reason}`);
  });
  server.onSettleFailure(async () => {
    events.push("settle_failed");
  });
  server.onAfterSettle(async () => {
    events.push(`settled:${currentPaymentRequest()?.url}`);
  });
  const httpServer = new x402HTTPResourceServer(server, {
    "GET /paid": route(),
    "GET /cached": route(),
    "GET /fails": route(),
    "GET /throws": route(),
    "GET /drains": route(),
    "GET /slow": route(),
    "POST /slow": route("upfront"),
    "GET /undecided": route(),
  });

  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  app = Fastify({ logger: { level: "info", stream: { write: (line: string) => logLines.push(line) } } });
  await installPaymentGate(app, { httpServer, publicUrl: baseUrl, paywall: { generateHtml: () => PAYWALL } });
  app.get("/paid", async (request) => {
    handlerRuns.paid++;
    return {
      content: "the paid resource",
      payer: request.x402Payment?.result.paymentRequirements.payTo,
    };
  });
  app.get("/cached", async (_request, reply) =>
    reply.header("cache-control", "max-age=60").send({ content: "cacheable" }),
  );
  app.get("/fails", async (_request, reply) => reply.code(503).send({ error: "upstream_down" }));
  app.get("/throws", async () => {
    throw new Error("handler bug");
  });
  // Moves the payer's whole balance away after verification, so the settlement that follows must fail.
  app.get("/drains", async (request) => {
    const payer = (request.x402Payment?.result.paymentPayload.payload as { authorization: { from: Address } })
      .authorization.from;
    const hash = await devnet.client.writeContract({
      address: devnet.addresses.usdc,
      abi: ABIs.usdc,
      functionName: "transfer",
      args: [devnet.accounts[0].address, await usdcBalance(payer)],
      account: payer,
    });
    await devnet.client.waitForTransactionReceipt({ hash });
    return { content: "must never reach the payer" };
  });
  const slow = async () => {
    slowStarted.resolve();
    await new Promise((resolve) => setTimeout(resolve, 300));
    return { content: "too late" };
  };
  app.get("/slow", slow);
  app.post("/slow", slow);
  app.get("/undecided", async () => {
    handlerRuns.paid++;
    return { content: "must not be served undecided" };
  });
  app.get("/free", async () => ({ content: "free" }));
  await app.listen({ port, host: "127.0.0.1" });
});

afterAll(async () => {
  await app?.close();
  await devnet?.stop();
});

beforeEach(() => {
  events.length = 0;
});

describe("unpaid requests", () => {
  it("get 402 with the payment terms in PAYMENT-REQUIRED", async () => {
    const response = await fetch(`${baseUrl}/paid?q=1`);
    expect(response.status).toBe(402);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const required = decodePaymentRequiredHeader(response.headers.get("payment-required")!);
    expect(required.error).toBe("Payment required");
    expect(required.resource.url).toBe(`${baseUrl}/paid?q=1`);
    expect(required.accepts).toEqual([
      expect.objectContaining({
        scheme: "exact",
        network,
        payTo,
        amount: PRICE.toString(),
        asset: devnet.addresses.usdc,
      }),
    ]);
  });

  it("name the configured public URL as their resource, whatever Host the caller sends", async () => {
    const response = await app.inject({ method: "GET", url: "/paid?q=1", headers: { host: "evil.example" } });
    expect(response.statusCode).toBe(402);
    const required = decodePaymentRequiredHeader(response.headers["payment-required"] as string);
    expect(required.resource.url).toBe(`${baseUrl}/paid?q=1`);
    const sneaky = await app.inject({ method: "GET", url: "//evil.example/paid", headers: { host: "x" } });
    if (sneaky.statusCode === 402) {
      const header = sneaky.headers["payment-required"] as string;
      expect(decodePaymentRequiredHeader(header).resource.url.startsWith(`${baseUrl}/`)).toBe(true);
    }
  });

  it("with HEAD get 402 like GET, and the handler does not run", async () => {
    const runs = handlerRuns.paid;
    const response = await fetch(`${baseUrl}/paid`, { method: "HEAD" });
    expect(response.status).toBe(402);
    expect(response.headers.get("payment-required")).not.toBeNull();
    expect(handlerRuns.paid).toBe(runs);
  });

  it("from a browser get the paywall page", async () => {
    const response = await fetch(`${baseUrl}/paid`, {
      headers: { accept: "text/html,application/xhtml+xml", "user-agent": "Mozilla/5.0 (X11; Linux x86_64)" },
    });
    expect(response.status).toBe(402);
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
    expect(await response.text()).toBe(PAYWALL);
    expect(response.headers.get("payment-required")).toBeTruthy();
  });

  it("reach routes that are not priced", async () => {
    const response = await fetch(`${baseUrl}/free`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ content: "free" });
  });

  it("with a garbage payment header get 402, not an error", async () => {
    const response = await fetch(`${baseUrl}/paid`, { headers: { "payment-signature": "not base64 json" } });
    expect(response.status).toBe(402);
  });
});

describe("paid requests", () => {
  it("are settled on chain before the response is sent, with the transaction in PAYMENT-RESPONSE", async () => {
    const payer = devnet.accounts[1];
    const [payerBefore, payToBefore] = await Promise.all([usdcBalance(payer.address), usdcBalance(payTo)]);

    const response = await payingFetch(payer.privateKey)(`${baseUrl}/paid`);

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ content: "the paid resource", payer: payTo });
    expect(response.headers.get("cache-control")).toBe("private");
    const settlement = decodePaymentResponseHeader(response.headers.get("payment-response")!);
    expect(settlement).toMatchObject({ success: true, network, payer: payer.address });
    const receipt = await devnet.client.getTransactionReceipt({ hash: settlement.transaction as Hex });
    expect(receipt.status).toBe("success");
    expect(await usdcBalance(payer.address)).toBe(payerBefore - PRICE);
    expect(await usdcBalance(payTo)).toBe(payToBefore + PRICE);
    expect(events).toEqual([`settled:/paid`]);
  });

  it("keep the handler's caching directives and add private", async () => {
    const response = await payingFetch(devnet.accounts[1].privateKey)(`${baseUrl}/cached`);
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("max-age=60, private");
  });

  it("are not charged when the handler answers with an error status, and the payment is canceled", async () => {
    const payer = devnet.accounts[2];
    const before = await usdcBalance(payer.address);

    const response = await payingFetch(payer.privateKey)(`${baseUrl}/fails`);

    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({ error: "upstream_down" });
    expect(response.headers.get("payment-response")).toBeNull();
    expect(await usdcBalance(payer.address)).toBe(before);
    expect(events).toEqual(["canceled:handler_failed"]);
  });

  it("are not charged when the handler throws, and the payment is canceled", async () => {
    const payer = devnet.accounts[2];
    const before = await usdcBalance(payer.address);

    const response = await payingFetch(payer.privateKey)(`${baseUrl}/throws`);

    expect(response.status).toBe(500);
    expect(await usdcBalance(payer.address)).toBe(before);
    expect(events).toEqual(["canceled:handler_threw"]);
  });

  it("that cannot be decided (verification_unavailable) get 503 with Retry-After, not a final 402, and pay nothing", async () => {
    const payer = devnet.accounts[5];
    const before = await usdcBalance(payer.address);
    const runs = handlerRuns.paid;
    const response = await payingFetch(payer.privateKey)(`${baseUrl}/undecided`);
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("5");
    expect(decodePaymentRequiredHeader(response.headers.get("payment-required") as string).error).toBe(
      "verification_unavailable",
    );
    expect(handlerRuns.paid).toBe(runs);
    expect(await usdcBalance(payer.address)).toBe(before);
  });

  it("whose settlement fails get 402 and never the resource", async () => {
    const payer = devnet.accounts[3];
    const payToBefore = await usdcBalance(payTo);

    const response = await payingFetch(payer.privateKey)(`${baseUrl}/drains`);

    expect(response.status).toBe(402);
    const body = await response.text();
    expect(body).not.toContain("must never reach the payer");
    expect(response.headers.get("cache-control")).toBe("no-store");
    const settlement = decodePaymentResponseHeader(response.headers.get("payment-response")!);
    expect(settlement.success).toBe(false);
    expect(settlement.errorReason).toMatch(/^[a-z0-9_]+$/);
    expect(JSON.parse(body)).toEqual({ error: "settlement_failed", reason: settlement.errorReason });
    expect(await usdcBalance(payTo)).toBe(payToBefore);
    expect(events).toEqual(["settle_failed"]);
  });

  it("are not charged when the client disconnects before the response, and the payment is canceled", async () => {
    const payer = devnet.accounts[5];
    const before = await usdcBalance(payer.address);
    slowStarted = signal();
    const abort = new AbortController();
    // The paid retry is sent, the handler starts, and the client hangs up while it works.
    const hangingUp = (input: string | URL | Request, init?: RequestInit) => {
      const request = new Request(input, init);
      if (!request.headers.get("payment-signature")) return fetch(request);
      void slowStarted.promise.then(() => abort.abort());
      return fetch(request, { signal: abort.signal });
    };
    const client = new x402Client().setSpendControls({
      allowedAssets: [{ network, asset: devnet.addresses.usdc }],
    });
    registerClientScheme(client, { signer: privateKeyToAccount(payer.privateKey) });

    await expect(wrapFetchWithPayment(hangingUp, client)(`${baseUrl}/slow`)).rejects.toThrow();

    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(events).toEqual(["canceled:handler_failed"]);
    expect(await usdcBalance(payer.address)).toBe(before);
  });

  it("on a route that settles before the handler are charged when the client disconnects, and nothing is canceled", async () => {
    const payer = devnet.accounts[4];
    const before = await usdcBalance(payer.address);
    slowStarted = signal();
    const abort = new AbortController();
    const hangingUp = (input: string | URL | Request, init?: RequestInit) => {
      const request = new Request(input, init);
      if (!request.headers.get("payment-signature")) return fetch(request);
      void slowStarted.promise.then(() => abort.abort());
      return fetch(request, { signal: abort.signal });
    };
    const client = new x402Client().setSpendControls({
      allowedAssets: [{ network, asset: devnet.addresses.usdc }],
    });
    registerClientScheme(client, { signer: privateKeyToAccount(payer.privateKey) });

    await expect(
      wrapFetchWithPayment(hangingUp, client)(`${baseUrl}/slow`, { method: "POST" }),
    ).rejects.toThrow();

    // Settled before the handler started, so before the client could hang up.
    expect(events).toEqual(["settled:/slow"]);
    expect(await usdcBalance(payer.address)).toBe(before - PRICE);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(events).toEqual(["settled:/slow"]);
  });

  it("whose settlement fails are logged with the reason, never the authorization or its signature", async () => {
    const payer = devnet.accounts[4];
    const sent: string[] = [];
    const recording = (input: string | URL | Request, init?: RequestInit) => {
      const header = new Request(input, init).headers.get("payment-signature");
      if (header) sent.push(header);
      return fetch(input, init);
    };
    logLines.length = 0;
    const client = new x402Client().setSpendControls({
      allowedAssets: [{ network, asset: devnet.addresses.usdc }],
    });
    registerClientScheme(client, { signer: privateKeyToAccount(payer.privateKey) });

    const response = await wrapFetchWithPayment(recording, client)(`${baseUrl}/drains`);

    expect(response.status).toBe(402);
    const { authorization, signature } = decodePaymentSignatureHeader(sent[0] as string).payload as {
      authorization: { nonce: string };
      signature: string;
    };
    const log = logLines.join("");
    expect(log).toContain("settlement failed");
    expect(log).toContain(decodePaymentResponseHeader(response.headers.get("payment-response")!).errorReason);
    expect(log.toLowerCase()).not.toContain(signature.slice(2, 40).toLowerCase());
    expect(log.toLowerCase()).not.toContain(authorization.nonce.slice(2).toLowerCase());
  });
});
