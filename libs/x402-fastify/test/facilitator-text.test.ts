import { createServer, type Server } from "node:http";
import { freePort } from "@humanpass/testing";
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import { HTTPFacilitatorClient, x402HTTPResourceServer, x402ResourceServer } from "@x402/core/server";
import { ExactEvmScheme } from "@x402/evm/exact/server";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, expect, it } from "vitest";
import { installPaymentGate } from "../src/index.ts";

const NETWORK = "eip155:84532";
const SIGNATURE = `0x${"ab".repeat(65)}`;
const PAYER = `0x${"22".repeat(20)}`;
// What a broken or hostile facilitator answers verify with: our payer's signature, a key-bearing RPC URL and
// terminal escape codes, none of which may reach the client.
const GARBAGE = `<html>upstream https://rpc.example.org/v2/FACILITATORKEY failed for ${SIGNATURE} \u001b[31m</html>`;

let facilitator: Server;
/** Which answer the facilitator garbles. */
let garbled: "verify" | "settle" = "verify";
let app: FastifyInstance;
let baseUrl: string;
const logLines: string[] = [];

beforeAll(async () => {
  facilitator = createServer((request, response) => {
    if (request.url?.endsWith("/supported")) {
      response.setHeader("content-type", "application/json");
      response.end(
        JSON.stringify({
          kinds: [{ x402Version: 2, scheme: "exact", network: NETWORK }],
          extensions: [],
          signers: {},
        }),
      );
      return;
    }
    if (request.url?.endsWith("/verify") && garbled === "settle") {
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify({ isValid: true, payer: PAYER }));
      return;
    }
    response.setHeader("content-type", "text/html");
    response.end(GARBAGE);
  });
  const facilitatorPort = await freePort();
  await new Promise<void>((resolve) => facilitator.listen(facilitatorPort, "127.0.0.1", resolve));

  const server = new x402ResourceServer(
    new HTTPFacilitatorClient({ url: `http://127.0.0.1:${facilitatorPort}` }),
  ).register(NETWORK, new ExactEvmScheme());
  const httpServer = new x402HTTPResourceServer(server, {
    "GET /paid": {
      accepts: { scheme: "exact", network: NETWORK, payTo: `0x${"11".repeat(20)}`, price: "$0.01" },
      description: "test resource",
      mimeType: "application/json",
    },
  });
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  app = Fastify({ logger: { level: "info", stream: { write: (line: string) => logLines.push(line) } } });
  await installPaymentGate(app, { httpServer, publicUrl: baseUrl });
  app.get("/paid", async () => ({ content: "the paid resource" }));
  await app.listen({ port, host: "127.0.0.1" });
});

afterAll(async () => {
  await app?.close();
  await new Promise((resolve) => facilitator?.close(resolve));
});

/** A payment for /paid that passes every local check, so that the facilitator is asked. */
async function paymentHeader(): Promise<string> {
  const offer = await fetch(`${baseUrl}/paid`);
  const required = decodePaymentRequiredHeader(offer.headers.get("payment-required") as string);
  const accepted = required.accepts[0];
  const now = Math.floor(Date.now() / 1000);
  return encodePaymentSignatureHeader({
    x402Version: 2,
    resource: required.resource,
    accepted,
    payload: {
      signature: SIGNATURE,
      authorization: {
        from: PAYER,
        to: accepted.payTo,
        value: accepted.amount,
        validAfter: String(now - 60),
        validBefore: String(now + 600),
        nonce: `0x${"33".repeat(32)}`,
      },
    },
  });
}

it("answers a facilitator's unusable verify answer with 502 and a fixed message, and logs it without secrets", async () => {
  const payment = await paymentHeader();
  logLines.length = 0;
  const response = await fetch(`${baseUrl}/paid`, { headers: { "payment-signature": payment } });
  expect(response.status).toBe(502);
  expect(await response.json()).toEqual({
    error: "facilitator_unavailable",
    message: "The payment facilitator gave no usable answer; retry later",
  });
  const logged = logLines.find((line) => line.includes("facilitator failed"));
  expect(logged).toBeDefined();
  expect(logged).not.toContain(SIGNATURE.slice(2));
  expect(logged).toContain("<redacted>");
});

it("answers a facilitator's unusable settle answer with 502 and the same fixed message, never its text", async () => {
  garbled = "settle";
  const response = await fetch(`${baseUrl}/paid`, {
    headers: { "payment-signature": await paymentHeader() },
  });
  expect(response.status).toBe(502);
  expect(await response.json()).toEqual({
    error: "facilitator_unavailable",
    message: "The payment facilitator gave no usable answer; retry later",
  });
});
