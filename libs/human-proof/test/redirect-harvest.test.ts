/**
 * A hostile origin redirects the agent to a human-proof server and keeps every payment header sent back to it, to
 * replay at that server. The agent is the plain `wrapFetchWithPayment(fetch, client)` with our extension: x402's
 * fetch follows redirects and sends the paid retry to the URL first asked, so only the extension can stop it.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { x402Client } from "@x402/core/client";
import { decodePaymentSignatureHeader, type PaymentOption } from "@x402/core/http";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  buildDIDFromAddress,
  CrossOriginRedirectError,
  configureHumanProofServer,
  createAttestationAwareSelector,
  createHumanProofClientExtension,
  createPoUVerifier,
  DEFAULT_AGENT_OWNERSHIP_SCHEMA,
  declareHumanProofExtension,
  InMemoryHumanUsageStorage,
  withoutRedirects,
} from "../src/index.ts";
import {
  type AttestationsApiStandIn,
  humanFromAddress,
  ownershipAttestation,
  startAttestationsApiStandIn,
} from "./attestations-api-stand-in.ts";
import {
  ASSET,
  NETWORK,
  type PaidHttpServer,
  ScriptedFacilitator,
  startPaidHttpServer,
} from "./paid-http-server.ts";

const PAY_TO = "0x00000000000000000000000000000000000000aa";
const agentAccount = privateKeyToAccount(`0x${"0b".repeat(32)}`);
const human = humanFromAddress(privateKeyToAccount(`0x${"0c".repeat(32)}`).address);
const price = (amount: string) => ({ amount, asset: ASSET, extra: { name: "USD Coin", version: "2" } });
const standard: PaymentOption = { scheme: "exact", network: NETWORK, payTo: PAY_TO, price: price("1000") };
const discounted: PaymentOption = {
  scheme: "exact",
  network: NETWORK,
  payTo: PAY_TO,
  price: price("500"),
  extra: { requiredAttestations: [DEFAULT_AGENT_OWNERSHIP_SCHEMA], maxUse: 5 },
};

let api: AttestationsApiStandIn;
let paid: PaidHttpServer;
let storage: InMemoryHumanUsageStorage;
const facilitator = new ScriptedFacilitator();

/** Redirects every unpaid request (through a hop on its own origin), keeps every payment header, replays each. */
interface HostileOrigin {
  url: string;
  captured: string[];
  /** The paid server's status for each captured header replayed there. */
  replays: number[];
  close(): Promise<void>;
}

async function startHostileOrigin(target: string): Promise<HostileOrigin> {
  const captured: string[] = [];
  const replays: number[] = [];
  const server: Server = createServer(async (request, response) => {
    const payment = request.headers["payment-signature"];
    if (typeof payment !== "string") {
      const next = request.url === "/hop" ? target : "/hop";
      response.writeHead(302, { location: next }).end();
      return;
    }
    captured.push(payment);
    replays.push((await fetch(target, { headers: { "payment-signature": payment } })).status);
    response.writeHead(200, { "content-type": "application/json" }).end('{"thanks":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/start`,
    captured,
    replays,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const carriesHumanProof = (header: string) =>
  decodePaymentSignatureHeader(header).extensions?.["human-proof"] !== undefined;

/** The plain set-up: x402's fetch on Node's fetch (or the one given), our selector and extension. */
function plainAgent(baseFetch: typeof fetch = fetch) {
  const selector = createAttestationAwareSelector(buildDIDFromAddress(agentAccount.address), undefined, {
    attestationsApiBaseUrl: api.attestationsUrl,
  });
  const client = new x402Client(selector.selector)
    .register("eip155:*", new ExactEvmScheme(agentAccount))
    .setSpendControls(false);
  const signer = {
    address: agentAccount.address,
    signMessage: (message: string) => agentAccount.signMessage({ message }),
  };
  client.registerExtension(createHumanProofClientExtension(signer, { selector }));
  return wrapFetchWithPayment(baseFetch, client);
}

beforeAll(async () => {
  api = await startAttestationsApiStandIn({
    attestations: [ownershipAttestation(human, agentAccount.address)],
    nullifiers: { [human.id]: "4242" },
  });
});
afterAll(() => api.close());

beforeEach(async () => {
  await paid?.close();
  storage = new InMemoryHumanUsageStorage();
  facilitator.settled.length = 0;
  paid = await startPaidHttpServer(
    {
      "GET /weather": {
        accepts: [standard, discounted],
        extensions: { "human-proof": declareHumanProofExtension({ statement: "Prove a human" }) },
      },
    },
    facilitator,
    (server) =>
      configureHumanProofServer(server, {
        verifier: createPoUVerifier({
          attestationsApiBaseUrl: api.attestationsUrl,
          nullifierApiBaseUrl: api.nullifierUrl,
        }),
        storage,
      }),
  );
});
afterAll(() => paid.close());

describe("a hostile origin that redirects a plain x402 fetch agent to a human-proof server", () => {
  it("captures no payment header: the agent refuses with a clear error, pays nothing and spends no use", async () => {
    const hostile = await startHostileOrigin(`${paid.url}/weather`);
    try {
      const attempt = plainAgent()(hostile.url);
      await expect(attempt).rejects.toBeInstanceOf(CrossOriginRedirectError);
      await expect(attempt).rejects.toThrow(
        `refusing to pay ${paid.url}/weather: the request to ${new URL(hostile.url).origin} was redirected there`,
      );
      expect(hostile.captured.filter(carriesHumanProof)).toEqual([]);
      expect(hostile.captured).toEqual([]);
      expect(hostile.replays).toEqual([]);
      expect(facilitator.settled).toEqual([]);
      expect(await storage.incrementIfBelow("4242", 5, `${paid.url}/weather`)).toBe(1);
    } finally {
      await hostile.close();
    }
  });

  it("the same agent asked for the server itself pays the discounted tier", async () => {
    const response = await plainAgent()(`${paid.url}/weather`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ paid: "500" });
  });

  it("an agent on withoutRedirects is handed the redirect, and may then ask the server itself", async () => {
    const hostile = await startHostileOrigin(`${paid.url}/weather`);
    try {
      const agent = plainAgent(withoutRedirects(fetch));
      const redirect = await agent(new URL("/hop", hostile.url).href);
      expect([redirect.status, redirect.headers.get("location")]).toEqual([302, `${paid.url}/weather`]);
      const response = await agent(`${paid.url}/weather`);
      expect(await response.json()).toEqual({ paid: "500" });
      expect(hostile.captured).toEqual([]);
    } finally {
      await hostile.close();
    }
  });
});
