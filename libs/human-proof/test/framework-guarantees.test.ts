/**
 * What the docs' Express, Hono and Fastify servers guarantee with the SDK's defaults: concurrent copies of one
 * payment run the handler once, and a paid `POST` whose client hangs up has no side effect without a transfer.
 */

import { eventually } from "@humanpass/testing";
import { x402Client, x402HTTPClient } from "@x402/core/client";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { registry } from "./proof-fixtures.ts";
import { type DocsServer, FRAMEWORKS, STANDARD_PRICE, startDocsServer } from "./support/docs-servers.ts";
import { ScriptedFacilitator } from "./support/paid-http-server.ts";

const payer = privateKeyToAccount(`0x${"41".repeat(32)}`);
const payments = new x402HTTPClient(
  new x402Client().register("eip155:*", new ExactEvmScheme(payer)).setSpendControls(false),
);

/** One signed payment of the route's first (standard) tier, as a header set to send any number of times. */
async function paymentFor(url: string, method: string): Promise<Record<string, string>> {
  const unpaid = await fetch(url, { method });
  expect(unpaid.status).toBe(402);
  const required = payments.getPaymentRequiredResponse(
    (name) => unpaid.headers.get(name),
    await unpaid.json(),
  );
  return payments.encodePaymentSignatureHeader(await payments.createPaymentPayload(required));
}

describe.each(FRAMEWORKS)("the docs' %s server", (framework) => {
  const facilitator = new ScriptedFacilitator();
  let server: DocsServer;

  beforeAll(async () => {
    server = await startDocsServer(framework, facilitator, { verifier: registry({}) });
  });
  afterEach(() => {
    facilitator.settled.length = 0;
  });
  afterAll(() => server.close());

  it("runs the handler once for 10 concurrent copies of one payment, and charges once", async () => {
    const headers = await paymentFor(`${server.url}/weather`, "GET");
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => fetch(`${server.url}/weather`, { headers })),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 402)).toHaveLength(9);
    expect(server.handlers.weather).toBe(1);
    expect(facilitator.settled).toEqual([STANDARD_PRICE]);
  });

  it("settles a paid POST before its handler: a client gone mid-request leaves no side effect unpaid", async () => {
    const headers = await paymentFor(`${server.url}/orders`, "POST");
    const client = new AbortController();
    const started = server.handlers.orderStarted();
    const request = fetch(`${server.url}/orders`, { method: "POST", headers, signal: client.signal }).catch(
      (error: Error) => error,
    );
    await started;
    // The transfer is made before the handler runs, so it exists when the client hangs up.
    expect(facilitator.settled).toEqual([STANDARD_PRICE]);
    client.abort();
    expect(await request).toBeInstanceOf(Error);
    await eventually(() => server.handlers.orders === 1);
    expect(facilitator.settled).toEqual([STANDARD_PRICE]);
  });
});
