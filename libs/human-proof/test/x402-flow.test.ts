/**
 * The human-proof extension in the real x402 flow: @x402/core's HTTP resource server on one side,
 * @x402/fetch with an x402Client and the EVM exact scheme on the other, the spec-2 stand-in as registry; and a
 * hostile origin that redirects the agent there to harvest its payment and proof.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import * as billionsClient from "@billionsnetwork/x402-human-proof-client";
import { x402Client } from "@x402/core/client";
import type { PaymentOption } from "@x402/core/http";
import { decodePaymentRequiredHeader, decodePaymentSignatureHeader } from "@x402/core/http";
import type { RoutesConfig } from "@x402/core/server";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  buildDIDFromAddress,
  CHALLENGE_NONCE_PATTERN,
  CrossOriginRedirectError,
  configureHumanProofServer,
  createAttestationAwareSelector,
  createHumanProofClientExtension,
  createPoUVerifier,
  DEFAULT_AGENT_OWNERSHIP_SCHEMA,
  declareHumanProofExtension,
  type HumanProofEvent,
  InMemoryHumanUsageStorage,
  paywallInstructions,
  withoutRedirects,
} from "../src/index.ts";
import {
  type AttestationsApiStandIn,
  humanFromAddress,
  ownershipAttestation,
  startAttestationsApiStandIn,
} from "./support/attestations-api-stand-in.ts";
import {
  ASSET,
  NETWORK,
  type PaidHttpServer,
  ScriptedFacilitator,
  startPaidHttpServer,
} from "./support/paid-http-server.ts";

const PAY_TO = "0x00000000000000000000000000000000000000aa";
const key = (n: number) => `0x${n.toString(16).padStart(64, "0")}` as const;
const pairedAgent = privateKeyToAccount(key(11));
const secondAgentOfSameHuman = privateKeyToAccount(key(12));
const unpairedAgent = privateKeyToAccount(key(13));
const human = humanFromAddress(privateKeyToAccount(key(1000)).address);

const price = (amount: string) => ({ amount, asset: ASSET, extra: { name: "USD Coin", version: "2" } });
const standard: PaymentOption = { scheme: "exact", network: NETWORK, payTo: PAY_TO, price: price("1000") };
const discounted = (extra: Record<string, unknown> = {}): PaymentOption => ({
  scheme: "exact",
  network: NETWORK,
  payTo: PAY_TO,
  price: price("500"),
  extra: { requiredAttestations: [DEFAULT_AGENT_OWNERSHIP_SCHEMA], ...extra },
});
const humanProof = {
  "human-proof": declareHumanProofExtension({
    statement: "Prove a human is behind you",
    expirationSeconds: 900,
  }),
};

const routes: RoutesConfig = {
  "GET /weather": {
    accepts: [standard, discounted({ maxUse: 2, scope: "weather" })],
    extensions: humanProof,
  },
  "GET /forecast": {
    accepts: [standard, discounted({ maxUse: 2, scope: "weather" })],
    extensions: humanProof,
  },
  "GET /report": { accepts: [standard, discounted({ maxUse: 1 })], extensions: humanProof },
  "GET /humans-only": { accepts: [discounted()], extensions: humanProof },
  "GET /failing": {
    accepts: [standard, discounted({ maxUse: 1, scope: "failing" })],
    extensions: humanProof,
  },
  "GET /plain": { accepts: [standard] },
};

let api: AttestationsApiStandIn;
let paid: PaidHttpServer;
const facilitator = new ScriptedFacilitator();
let storage: InMemoryHumanUsageStorage;
const events: HumanProofEvent[] = [];

beforeAll(async () => {
  api = await startAttestationsApiStandIn({
    attestations: [
      ownershipAttestation(human, pairedAgent.address),
      ownershipAttestation(human, secondAgentOfSameHuman.address),
    ],
    nullifiers: { [human.id]: "31337" },
  });
});
afterAll(() => api.close());

beforeEach(async () => {
  await paid?.close();
  storage = new InMemoryHumanUsageStorage();
  events.length = 0;
  facilitator.verified.length = 0;
  facilitator.settled.length = 0;
  facilitator.verifyAnswer = async () => ({ isValid: true });
  facilitator.settleAnswer = async () => ({
    success: true,
    transaction: `0x${"ab".repeat(32)}`,
    network: NETWORK,
  });
  paid = await startPaidHttpServer(
    routes,
    facilitator,
    (server) =>
      configureHumanProofServer(server, {
        verifier: createPoUVerifier({
          attestationsApiBaseUrl: api.attestationsUrl,
          nullifierApiBaseUrl: api.nullifierUrl,
        }),
        storage,
        onEvent: (event) => {
          events.push(event);
        },
      }),
    paywallInstructions(),
  );
});
afterAll(() => paid.close());

type Account = ReturnType<typeof privateKeyToAccount>;
const signerOf = (account: Account) => ({
  address: account.address,
  signMessage: (message: string) => account.signMessage({ message }),
});

/** An agent as a user would write it with this library: selector + extension on an x402Client, on `baseFetch`. */
function ourAgent(account: Account, baseFetch: typeof fetch = fetch) {
  const selector = createAttestationAwareSelector(buildDIDFromAddress(account.address), undefined, {
    attestationsApiBaseUrl: api.attestationsUrl,
  });
  const client = new x402Client(selector.selector)
    .register("eip155:*", new ExactEvmScheme(account))
    .setSpendControls(false);
  client.registerExtension(createHumanProofClientExtension(signerOf(account), { selector }));
  return wrapFetchWithPayment(baseFetch, client);
}

function billionsAgent(account: Account) {
  const did = billionsClient.buildDIDFromAddress(account.address);
  const { selector, refresh } = billionsClient.createAttestationAwareSelector(did, undefined, {
    attestationsApiBaseUrl: api.attestationsUrl,
  });
  const client = new x402Client(selector)
    .register("eip155:*", new ExactEvmScheme(account))
    .setSpendControls(false);
  client.registerExtension(
    billionsClient.createHumanProofExtension(signerOf(account), {
      attestationsApiBaseUrl: api.attestationsUrl,
    }),
  );
  return { pay: wrapFetchWithPayment(fetch, client), refresh };
}

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

function refusal(response: Response): string | undefined {
  const header = response.headers.get("payment-required");
  return header ? decodePaymentRequiredHeader(header).error : undefined;
}

describe("human-proof in the x402 flow", () => {
  it("an agent backed by a verified human pays the discounted tier until max_use_exceeded, then the standard tier", async () => {
    const pay = ourAgent(pairedAgent);
    for (let i = 0; i < 3; i++) expect((await pay(`${paid.url}/weather`)).status).toBe(200);
    expect(facilitator.settled).toEqual(["500", "500", "1000"]);
    expect(await storage.incrementIfBelow("31337", 2, "weather")).toBeNull();
    expect(events.filter((e) => e.type === "max_use_exceeded")).toEqual([
      {
        type: "max_use_exceeded",
        resource: `${paid.url}/weather`,
        humanId: "31337",
        maxUse: 2,
        scope: "weather",
      },
    ]);
  });

  it("two routes with one scope, and two agents of one human, share one quota", async () => {
    expect((await ourAgent(pairedAgent)(`${paid.url}/weather`)).status).toBe(200);
    expect((await ourAgent(secondAgentOfSameHuman)(`${paid.url}/forecast`)).status).toBe(200);
    expect((await ourAgent(pairedAgent)(`${paid.url}/forecast`)).status).toBe(200);
    expect(facilitator.settled).toEqual(["500", "500", "1000"]);
  });

  it("an agent without the attestation goes straight to the standard tier", async () => {
    expect((await ourAgent(unpairedAgent)(`${paid.url}/weather`)).status).toBe(200);
    expect(facilitator.settled).toEqual(["1000"]);
    expect(events).toEqual([]);
  });

  it("Billions' published client pays the discounted tier", async () => {
    const agent = billionsAgent(pairedAgent);
    await agent.refresh();
    const response = await agent.pay(`${paid.url}/report`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ paid: "500" });
    expect(events.map((e) => e.type)).toEqual(["human_verified"]);
  });

  it("a required-attestation route refuses an agent without a human, with the reason in the 402", async () => {
    const response = await ourAgent(unpairedAgent)(`${paid.url}/humans-only`);
    expect(response.status).toBe(402);
    expect(refusal(response)).toBe("not_registered");
    expect(facilitator.verified).toEqual([]);
    expect(events).toEqual([
      {
        type: "human_not_registered",
        resource: `${paid.url}/humans-only`,
        did: buildDIDFromAddress(unpairedAgent.address),
      },
    ]);
  });

  it("refuses with verification_unavailable, and charges nothing, while the attestations API is down", async () => {
    api.failWith(503);
    try {
      const response = await ourAgent(pairedAgent)(`${paid.url}/humans-only`);
      expect(response.status).toBe(402);
      expect(refusal(response)).toBe("verification_unavailable");
    } finally {
      api.failWith(null);
    }
    expect(facilitator.verified).toEqual([]);
    expect((await ourAgent(pairedAgent)(`${paid.url}/humans-only`)).status).toBe(200);
  });

  it("gives the quota back when the facilitator answers invalid", async () => {
    facilitator.verifyAnswer = async () => ({ isValid: false, invalidReason: "insufficient_funds" });
    const response = await ourAgent(pairedAgent)(`${paid.url}/humans-only`);
    expect(refusal(response)).toBe("insufficient_funds");
    facilitator.verifyAnswer = async () => ({ isValid: true });
    expect((await ourAgent(pairedAgent)(`${paid.url}/report`)).status).toBe(200);
    expect(await storage.decrementIfAboveZero("31337", `${paid.url}/report`)).toBe(0);
    expect(await storage.decrementIfAboveZero("31337", `${paid.url}/humans-only`)).toBeNull();
  });

  it("every 402 answering a paid request carries a fresh challenge, nonce included, to sign the next proof on", async () => {
    const challengeOf = (response: Response) => {
      const required = decodePaymentRequiredHeader(response.headers.get("payment-required") ?? "");
      return (required.extensions?.["human-proof"] as { info: { nonce?: string; issuedAt: string } }).info;
    };
    const unpaid = challengeOf(await fetch(`${paid.url}/humans-only`));
    facilitator.verifyAnswer = async () => ({ isValid: false, invalidReason: "insufficient_funds" });
    const refusedPayment = await ourAgent(pairedAgent)(`${paid.url}/humans-only`);
    const refusedProof = await ourAgent(unpairedAgent)(`${paid.url}/humans-only`);
    expect([refusal(refusedPayment), refusal(refusedProof)]).toEqual([
      "insufficient_funds",
      "not_registered",
    ]);
    const nonces = [unpaid, challengeOf(refusedPayment), challengeOf(refusedProof)].map((info) => info.nonce);
    for (const nonce of nonces) expect(nonce).toMatch(CHALLENGE_NONCE_PATTERN);
    expect(new Set(nonces).size).toBe(3);
  });

  it("gives the quota back when verification throws, when settlement fails, and when the handler fails", async () => {
    const scope = `${paid.url}/report`;
    const pay = ourAgent(pairedAgent);

    facilitator.verifyAnswer = async () => {
      throw new Error("facilitator unreachable");
    };
    expect((await pay(`${paid.url}/report`)).status).toBe(402);
    expect(await storage.incrementIfBelow("31337", 1, scope)).toBe(1);
    await storage.decrementIfAboveZero("31337", scope);

    facilitator.verifyAnswer = async () => ({ isValid: true });
    facilitator.settleAnswer = async () => ({
      success: false,
      errorReason: "transaction_reverted",
      transaction: "",
      network: NETWORK,
    });
    expect((await pay(`${paid.url}/report`)).status).toBe(402);
    expect(await storage.incrementIfBelow("31337", 1, scope)).toBe(1);
    await storage.decrementIfAboveZero("31337", scope);

    facilitator.settleAnswer = async () => ({
      success: true,
      transaction: `0x${"ab".repeat(32)}`,
      network: NETWORK,
    });
    expect((await pay(`${paid.url}/failing`)).status).toBe(500);
    expect(await storage.incrementIfBelow("31337", 1, "failing")).toBe(1);
    expect(facilitator.settled).toEqual([]);
  });

  it("leaves routes without human-proof as plain x402", async () => {
    expect((await ourAgent(unpairedAgent)(`${paid.url}/plain`)).status).toBe(200);
    expect(facilitator.settled).toEqual(["1000"]);
  });

  it("shows the identity-skill paywall page to an unpaid browser", async () => {
    const response = await fetch(`${paid.url}/weather`, {
      headers: { accept: "text/html", "user-agent": "Mozilla/5.0 (X11; Linux x86_64)" },
    });
    expect(response.status).toBe(402);
    expect(response.headers.get("content-type")).toContain("text/html");
    expect(await response.text()).toContain("verified-agent-identity");
  });
});

describe("a hostile origin that redirects a plain x402 fetch agent to a human-proof server", () => {
  it("captures no payment header: the agent refuses with a clear error, pays nothing and spends no use", async () => {
    const hostile = await startHostileOrigin(`${paid.url}/weather`);
    try {
      const attempt = ourAgent(pairedAgent)(hostile.url);
      await expect(attempt).rejects.toBeInstanceOf(CrossOriginRedirectError);
      await expect(attempt).rejects.toThrow(
        `refusing to pay ${paid.url}/weather: the request to ${new URL(hostile.url).origin} was redirected there`,
      );
      expect(hostile.captured.filter(carriesHumanProof)).toEqual([]);
      expect(hostile.captured).toEqual([]);
      expect(hostile.replays).toEqual([]);
      expect(facilitator.settled).toEqual([]);
      expect(await storage.incrementIfBelow("31337", 2, "weather")).toBe(1);
    } finally {
      await hostile.close();
    }
  });

  it("an agent on withoutRedirects is handed the redirect, and may then ask the server itself", async () => {
    const hostile = await startHostileOrigin(`${paid.url}/weather`);
    try {
      const agent = ourAgent(pairedAgent, withoutRedirects(fetch));
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
