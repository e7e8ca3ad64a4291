/**
 * A second x402 server on another origin collects an agent's human proof and tries to spend it at the gateway,
 * for the discount, against the quota of the human behind the agent. Every way it tries is refused, the human's
 * usage does not move, and nobody is charged.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import * as billions from "@billionsnetwork/x402-human-proof-client";
import {
  createChallengeNonces,
  DEFAULT_AGENT_OWNERSHIP_SCHEMA,
  type HumanProofChallenge,
} from "@humanpass/human-proof";
import { x402Client } from "@x402/core/client";
import {
  decodePaymentRequiredHeader,
  decodePaymentSignatureHeader,
  encodePaymentRequiredHeader,
  encodePaymentSignatureHeader,
} from "@x402/core/http";
import type { PaymentPayload, PaymentRequired } from "@x402/core/types";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { humanAgentFetch, humanSigner, paymentError } from "./support/agents.ts";
import { demoRoute, type Gateway, humanTier, type Stack, standardTier, startStack } from "./support/stack.ts";

const VICTIM = 1;
const ATTACKER = 2;
const HUMAN_ID = "3131";
const SCOPE = "cross-site";

let stack: Stack;
let gateway: Gateway;
let thirdParty: ThirdPartySite;

const human = (n: number) => privateKeyToAccount(`0x${n.toString(16).padStart(64, "0")}` as Hex).address;

/**
 * The other site: answers 402 with terms it chooses (a challenge of its own, or the gateway's own 402 relayed),
 * and keeps every payment payload an agent sends it.
 */
interface ThirdPartySite {
  url: string;
  offer(paymentRequired: PaymentRequired): void;
  collected: PaymentPayload[];
  close(): Promise<void>;
}

async function startThirdPartySite(): Promise<ThirdPartySite> {
  let offered: PaymentRequired | undefined;
  const collected: PaymentPayload[] = [];
  const server: Server = createServer((request, response) => {
    const payment = request.headers["payment-signature"];
    if (typeof payment === "string") {
      collected.push(decodePaymentSignatureHeader(payment));
      response.writeHead(200, { "content-type": "application/json" }).end('{"thanks":true}');
      return;
    }
    response
      .writeHead(402, { "payment-required": encodePaymentRequiredHeader(offered as PaymentRequired) })
      .end("{}");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  // Another origin: another port.
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    offer(paymentRequired) {
      offered = paymentRequired;
    },
    collected,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

beforeAll(async () => {
  stack = await startStack("pg_cross_site");
  const { network } = stack;
  gateway = await stack.startGateway({
    routes: [
      demoRoute("/weather", [
        standardTier(network, "10000"),
        humanTier(network, "1000", { maxUse: 5, scope: SCOPE }),
      ]),
    ],
  });
  await stack.attestations.pairAgent(
    privateKeyToAccount(stack.agentKey(VICTIM)).address,
    human(3001),
    HUMAN_ID,
  );
  thirdParty = await startThirdPartySite();
});

afterAll(async () => {
  await thirdParty?.close();
  await stack?.close();
});

async function gatewayTerms(): Promise<PaymentRequired> {
  const unpaid = await fetch(`${gateway.url}/weather`);
  return decodePaymentRequiredHeader(unpaid.headers.get("payment-required") as string);
}

const humanTierOf = (required: PaymentRequired) =>
  required.accepts.find((r) => Array.isArray(r.extra?.requiredAttestations)) ?? required.accepts[0];

/** The third party's own 402 for `resourceUrl`, priced like the gateway's human tier, with its own challenge. */
function ownChallenge(resourceUrl: string, terms: PaymentRequired, signedFor = resourceUrl): PaymentRequired {
  const issuedAt = new Date().toISOString();
  const domain = new URL(signedFor).hostname;
  const nonces = createChallengeNonces({ keys: ["the-third-party-site-own-nonce-key"] });
  const challenge: HumanProofChallenge = {
    info: {
      domain,
      uri: signedFor,
      version: "1",
      nonce: nonces.issue({ domain, uri: signedFor }, Date.parse(issuedAt)),
      issuedAt,
      resources: [signedFor],
      requiredAttestations: [DEFAULT_AGENT_OWNERSHIP_SCHEMA],
    },
    supportedChains: [{ chainId: stack.network, type: "eip191" }],
  };
  return {
    x402Version: 2,
    resource: { url: resourceUrl, description: "", mimeType: "application/json" },
    // The gateway's own terms (payTo and price): a payment made here would be good there too.
    accepts: [humanTierOf(terms)],
    extensions: { "human-proof": challenge },
  };
}

/** The victim agent, with Billions' published client, which signs whatever challenge a 402 names. */
function billionsAgent(index: number) {
  const key = stack.agentKey(index);
  const client = new x402Client((_v, accepts) =>
    humanTierOf({ accepts } as PaymentRequired),
  ).setSpendControls({
    allowedAssets: [{ network: stack.network, asset: stack.devnet.addresses.usdc }],
  });
  registerExactEvmScheme(client, { signer: privateKeyToAccount(key) });
  client.registerExtension(
    billions.createHumanProofExtension(humanSigner(key), {
      attestationsApiBaseUrl: stack.attestations.attestationsUrl,
    }) as never,
  );
  return wrapFetchWithPayment(fetch, client);
}

/** The attacker spends a collected proof at the gateway, paying the human tier with its own wallet. */
async function spendWithOwnWallet(proof: unknown): Promise<Response> {
  const terms = await gatewayTerms();
  const client = new x402Client(() => humanTierOf(terms)).setSpendControls({
    allowedAssets: [{ network: stack.network, asset: stack.devnet.addresses.usdc }],
  });
  registerExactEvmScheme(client, { signer: privateKeyToAccount(stack.agentKey(ATTACKER)) });
  const payload = await client.createPaymentPayload(terms);
  return replay({ ...payload, extensions: { ...payload.extensions, "human-proof": proof } });
}

function replay(payload: PaymentPayload): Promise<Response> {
  return fetch(`${gateway.url}/weather`, {
    headers: { "payment-signature": encodePaymentSignatureHeader(payload) },
  });
}

async function expectNothingMoved(balances: Record<string, bigint>) {
  expect(await stack.storage.count(HUMAN_ID, SCOPE)).toBe(0);
  for (const index of [VICTIM, ATTACKER]) {
    expect(await stack.usdcBalance(privateKeyToAccount(stack.agentKey(index)).address)).toBe(balances[index]);
  }
}

async function balances(): Promise<Record<string, bigint>> {
  const out: Record<string, bigint> = {};
  for (const index of [VICTIM, ATTACKER])
    out[index] = await stack.usdcBalance(privateKeyToAccount(stack.agentKey(index)).address);
  return out;
}

describe("a proof collected by another x402 site", () => {
  it("signed for that site's own challenge: refused at the gateway, with or without the agent's payment", async () => {
    const before = await balances();
    thirdParty.offer(ownChallenge(`${thirdParty.url}/buy`, await gatewayTerms()));
    const paid = await billionsAgent(VICTIM)(`${thirdParty.url}/buy`);
    expect(paid.status).toBe(200);
    const stolen = thirdParty.collected.at(-1) as PaymentPayload;

    expect(paymentError(await spendWithOwnWallet(stolen.extensions?.["human-proof"]))).toBe(
      "resource_mismatch",
    );
    // The agent's whole payment, forwarded as it is: it is the victim's own authorization, still refused.
    expect(paymentError(await replay(stolen))).toBe("resource_mismatch");
    await expectNothingMoved(before);
  });

  it("signed for a challenge naming the gateway's URL but the other site's nonce: refused", async () => {
    const before = await balances();
    const terms = await gatewayTerms();
    thirdParty.offer(ownChallenge(`${thirdParty.url}/buy`, terms, `${gateway.url}/weather`));
    expect((await billionsAgent(VICTIM)(`${thirdParty.url}/buy`)).status).toBe(200);
    const stolen = thirdParty.collected.at(-1) as PaymentPayload;

    expect(paymentError(await replay(stolen))).toBe("unknown_or_expired_nonce");
    expect(paymentError(await spendWithOwnWallet(stolen.extensions?.["human-proof"]))).toBe(
      "unknown_or_expired_nonce",
    );
    await expectNothingMoved(before);
  });

  it("the gateway's own challenge relayed by the other site: our client signs no proof for it and offers the standard tier", async () => {
    const before = await balances();
    const relayed = await gatewayTerms();
    thirdParty.offer({ ...relayed, resource: { ...relayed.resource, url: `${thirdParty.url}/buy` } });
    const pay = humanAgentFetch(stack.agentKey(VICTIM), {
      network: stack.network,
      usdc: stack.devnet.addresses.usdc,
      attestationsUrl: stack.attestations.attestationsUrl,
    });
    expect((await pay(`${thirdParty.url}/buy`)).status).toBe(200);
    const collected = thirdParty.collected.at(-1) as PaymentPayload;
    // The 402's declaration comes back as x402 echoes it; no proof was signed into it.
    expect(collected.extensions?.["human-proof"]).toEqual(relayed.extensions?.["human-proof"]);
    expect(collected.accepted.extra?.requiredAttestations).toBeUndefined();
    await expectNothingMoved(before);
  });

  it("signed by a client that does not check (Billions'), for the relayed challenge: the attacker's payment is refused", async () => {
    const before = await balances();
    const relayed = await gatewayTerms();
    thirdParty.offer({ ...relayed, resource: { ...relayed.resource, url: `${thirdParty.url}/buy` } });
    expect((await billionsAgent(VICTIM)(`${thirdParty.url}/buy`)).status).toBe(200);
    const stolen = thirdParty.collected.at(-1) as PaymentPayload;

    expect(paymentError(await spendWithOwnWallet(stolen.extensions?.["human-proof"]))).toBe(
      "payer_not_signer",
    );
    await expectNothingMoved(before);
  });
});
