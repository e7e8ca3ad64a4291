import * as billions from "@billionsnetwork/x402-human-proof-client";
import { ABIs } from "@humanpass/devnet";
import {
  createCloudEvent,
  ensureStreams,
  followChainInvalidations,
  jetstreamManager,
  subjectOf,
} from "@humanpass/event-bus";
import { cachePositiveLookups, DEFAULT_AGENT_OWNERSHIP_SCHEMA } from "@humanpass/human-proof";
import { eventually } from "@humanpass/testing";
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { type Address, type Hex, parseEventLogs } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  agentFetch,
  humanAgentFetch,
  humanSigner,
  humanTierOnlyFetch,
  paymentError,
  settlementOf,
} from "./support/agents.ts";
import {
  demoRoute,
  type Gateway,
  humanTier,
  logger,
  type Stack,
  standardTier,
  startStack,
} from "./support/stack.ts";

let stack: Stack;
let gateway: Gateway;

const STANDARD = 10_000n;
const HUMAN = 1_000n;

function agent(index: number): { key: Hex; address: Address } {
  const key = stack.agentKey(index);
  return { key, address: privateKeyToAccount(key).address };
}

const human = (n: number) => privateKeyToAccount(`0x${n.toString(16).padStart(64, "0")}` as Hex).address;

function options() {
  return {
    network: stack.network,
    usdc: stack.devnet.addresses.usdc,
    attestationsUrl: stack.attestations.attestationsUrl,
  };
}

beforeAll(async () => {
  stack = await startStack("pg_payments");
  const { network } = stack;
  gateway = await stack.startGateway({
    routes: [
      demoRoute(
        "/weather",
        [standardTier(network, "10000"), humanTier(network, "1000", { maxUse: 3, scope: "premium" })],
        {
          humanProof: { statement: "Prove a human stands behind you", expirationSeconds: 900 },
        },
      ),
      demoRoute("/forecast", [
        standardTier(network, "20000"),
        humanTier(network, "2000", { maxUse: 3, scope: "premium" }),
      ]),
      demoRoute("/limited", [
        standardTier(network, "10000"),
        humanTier(network, "1000", { maxUse: 2, scope: "limited" }),
      ]),
      demoRoute("/report", [humanTier(network, "5000")]),
      demoRoute("/joke", [standardTier(network, "1000")]),
    ],
  });
  // Agents 1, 3, 4 and 6 are paired with verified humans; 7 belongs to the same human as 6; 2 is not paired.
  await stack.attestations.pairAgent(agent(1).address, human(101), "1001");
  await stack.attestations.pairAgent(agent(3).address, human(103), "1003");
  await stack.attestations.pairAgent(agent(4).address, human(104), "1004");
  await stack.attestations.pairAgent(agent(6).address, human(106), "1006");
  await stack.attestations.pairAgent(agent(7).address, human(106), "1006");
});

afterAll(async () => {
  await stack?.close();
});

async function expectTransfer(response: Response, from: Address, amount: bigint) {
  const settlement = settlementOf(response);
  expect(settlement).toMatchObject({ success: true, network: stack.network, payer: from });
  const receipt = await stack.devnet.client.getTransactionReceipt({ hash: settlement?.transaction as Hex });
  expect(receipt.status).toBe("success");
  const transfers = parseEventLogs({
    abi: ABIs.usdc,
    logs: receipt.logs,
    eventName: "Transfer",
  }) as unknown as {
    args: { from: Address; to: Address; value: bigint };
  }[];
  expect(transfers.map((t) => t.args)).toEqual([{ from, to: stack.payTo, value: amount }]);
}

describe("the real @x402/fetch client with a viem account", () => {
  it("pays the standard tier in full and gets the resource, the transaction in PAYMENT-RESPONSE", async () => {
    const payer = agent(2);
    const [payerBefore, payToBefore] = await Promise.all([
      stack.usdcBalance(payer.address),
      stack.usdcBalance(stack.payTo),
    ]);

    const response = await agentFetch(payer.key, options())(`${gateway.url}/weather`);

    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("private");
    const body = (await response.json()) as any;
    expect(body).toMatchObject({
      data: { route: "/weather" },
      purchase: { tier: "standard", amount: "10000", payer: payer.address },
    });
    await expectTransfer(response, payer.address, STANDARD);
    expect(await stack.usdcBalance(payer.address)).toBe(payerBefore - STANDARD);
    expect(await stack.usdcBalance(stack.payTo)).toBe(payToBefore + STANDARD);
  });

  it("pays the discounted tier for an agent backed by a verified human, and the events say who", async () => {
    const payer = agent(1);
    const [payerBefore, payToBefore] = await Promise.all([
      stack.usdcBalance(payer.address),
      stack.usdcBalance(stack.payTo),
    ]);

    const response = await humanAgentFetch(payer.key, options())(`${gateway.url}/weather`);

    expect(response.status).toBe(200);
    expect(((await response.json()) as any).purchase).toMatchObject({ tier: "human", amount: "1000" });
    await expectTransfer(response, payer.address, HUMAN);
    expect(await stack.usdcBalance(payer.address)).toBe(payerBefore - HUMAN);
    expect(await stack.usdcBalance(stack.payTo)).toBe(payToBefore + HUMAN);
    expect(await stack.storage.count("1001", "premium")).toBe(1);

    const settled = await eventually(() =>
      stack.events.find((e) => e.type === "payment_settled" && e.data.payer === payer.address),
    );
    expect(settled.data).toMatchObject({
      resource: `${gateway.url}/weather`,
      amount: "1000",
      payTo: stack.payTo,
      humanId: "1001",
      transaction: settlementOf(response)?.transaction,
    });
    expect(settled.source).toBe("payment-gateway");
    const verified = stack.events.find((e) => e.type === "human_verified" && e.data.humanId === "1001");
    expect(verified?.data).toMatchObject({
      resource: `${gateway.url}/weather`,
      humanDid: expect.stringContaining("did:iden3:billions:main:"),
    });
  });
});

describe("Billions' published client 0.1.7", () => {
  it("pays the discounted tier of our gateway", async () => {
    const payer = agent(3);
    const before = await stack.usdcBalance(payer.address);
    const selector = billions.createAttestationAwareSelector(
      billions.buildDIDFromAddress(payer.address),
      undefined,
      {
        attestationsApiBaseUrl: stack.attestations.attestationsUrl,
      },
    );
    const client = new x402Client(selector.selector).setSpendControls({
      allowedAssets: [{ network: stack.network, asset: stack.devnet.addresses.usdc }],
    });
    registerExactEvmScheme(client, { signer: privateKeyToAccount(payer.key) });
    client.registerExtension(
      billions.createHumanProofExtension(humanSigner(payer.key), {
        attestationsApiBaseUrl: stack.attestations.attestationsUrl,
      }) as never,
    );
    // As Billions' README has it: refresh before paying; x402 picks the tier before its payment-creation hooks run.
    await selector.refresh();
    client.onBeforePaymentCreation(async () => {
      await selector.refresh();
    });

    const response = await wrapFetchWithPayment(fetch, client)(`${gateway.url}/weather`);

    expect(response.status).toBe(200);
    expect(((await response.json()) as any).purchase.tier).toBe("human");
    await expectTransfer(response, payer.address, HUMAN);
    expect(await stack.usdcBalance(payer.address)).toBe(before - HUMAN);
  });
});

describe("our client extension and attestation-aware selector", () => {
  it("pay the discounted tier until max_use_exceeded, then the standard tier without any change to the agent", async () => {
    const payer = agent(4);
    const pay = humanAgentFetch(payer.key, options());
    const before = await stack.usdcBalance(payer.address);

    const tiers: string[] = [];
    for (let i = 0; i < 3; i++) {
      const response = await pay(`${gateway.url}/limited`);
      expect(response.status).toBe(200);
      tiers.push(((await response.json()) as any).purchase.tier);
    }

    expect(tiers).toEqual(["human", "human", "standard"]);
    expect(await stack.usdcBalance(payer.address)).toBe(before - 2n * HUMAN - STANDARD);
    expect(await stack.storage.count("1004", "limited")).toBe(2);
    await eventually(() =>
      stack.events.find(
        (e) => e.type === "max_use_exceeded" && e.data.humanId === "1004" && e.data.maxUse === 2,
      ),
    );
  });

  it("send an agent without the attestation straight to the standard tier, with no proof", async () => {
    const payer = agent(2);
    const before = await stack.usdcBalance(payer.address);

    const response = await humanAgentFetch(payer.key, options())(`${gateway.url}/limited`);

    expect(response.status).toBe(200);
    expect(((await response.json()) as any).purchase.tier).toBe("standard");
    expect(await stack.usdcBalance(payer.address)).toBe(before - STANDARD);
    const did = billions.buildDIDFromAddress(payer.address);
    expect(stack.events.some((e) => e.type === "human_not_registered" && e.data.did === did)).toBe(false);
  });
});

describe("cached human lookups", () => {
  it("serve repeat payments without asking the API, and end when the chain revokes the pairing", async () => {
    await ensureStreams(await jetstreamManager(stack.nats), stack.topology, ["CHAIN"]);
    const verifier = cachePositiveLookups(stack.verifier(), { ttlMs: 600_000 });
    const invalidations = await followChainInvalidations({
      nats: stack.nats,
      topology: stack.topology,
      logger,
      cache: { invalidate: (revocation) => verifier.revoke(revocation), clear: () => verifier.clear() },
    });
    try {
      const cached = await stack.startGateway({
        routes: [demoRoute("/report", [humanTier(stack.network, "5000")])],
        verifier,
      });
      const payer = agent(10);
      const attestationId = await stack.attestations.pairAgent(payer.address, human(110), "1010");
      const pay = () => humanTierOnlyFetch(payer.key, options())(`${cached.url}/report`);

      expect((await pay()).status).toBe(200);
      const revocation = await stack.attestations.revoke(attestationId, payer.address, human(110));
      // The API already says "not paired"; the cached pairing holds until the chain's revocation arrives.
      expect((await pay()).status).toBe(200);

      const event = createCloudEvent({
        source: "chain-indexer",
        type: "attestation_revoked",
        data: revocation,
      });
      // As the chain-indexer's relay would; the stream captures it from the subject.
      stack.nats.publish(subjectOf(stack.topology, "CHAIN", "attestation_revoked"), JSON.stringify(event));
      await stack.nats.flush();

      const refused = await eventually(async () => {
        const response = await pay();
        return response.status === 402 ? response : undefined;
      });
      expect(paymentError(refused)).toBe("not_registered");
    } finally {
      await invalidations.stop();
    }
  });
});

describe("route patterns", () => {
  it("two routes with the same scope share one quota per human, across that human's agents", async () => {
    const first = humanAgentFetch(agent(6).key, options());
    const tiers: string[] = [];
    for (const route of ["/weather", "/forecast", "/weather"]) {
      const response = await first(`${gateway.url}${route}`);
      tiers.push(((await response.json()) as any).purchase.tier);
    }
    // The quota is the human's: a second agent of the same human finds it used up, on either route.
    const second = humanAgentFetch(agent(7).key, options());
    for (const route of ["/forecast", "/weather"]) {
      const response = await second(`${gateway.url}${route}`);
      expect(response.status).toBe(200);
      tiers.push(((await response.json()) as any).purchase.tier);
    }

    expect(tiers).toEqual(["human", "human", "human", "standard", "standard"]);
    expect(await stack.storage.count("1006", "premium")).toBe(3);
  });

  it("required attestation: the only tier is the gated one, and an agent without the attestation is refused with 402", async () => {
    const unpaired = await humanTierOnlyFetch(agent(2).key, options())(`${gateway.url}/report`);
    expect(unpaired.status).toBe(402);
    expect(paymentError(unpaired)).toBe("not_registered");

    const paired = await humanAgentFetch(agent(1).key, options())(`${gateway.url}/report`);
    expect(paired.status).toBe(200);
    expect(((await paired.json()) as any).purchase).toMatchObject({ tier: "human", amount: "5000" });
  });

  it("no attestation: plain x402, the 402 carries no human-proof challenge", async () => {
    const unpaid = await fetch(`${gateway.url}/joke`);
    expect(unpaid.status).toBe(402);
    const required = decodePaymentRequiredHeader(unpaid.headers.get("payment-required")!);
    expect(required.extensions?.["human-proof"]).toBeUndefined();
    expect(required.accepts).toHaveLength(1);

    const paid = await agentFetch(agent(2).key, options())(`${gateway.url}/joke`);
    expect(paid.status).toBe(200);
  });

  it("optional attestation: the 402 offers both tiers and a fresh challenge each time", async () => {
    const [a, b] = await Promise.all([fetch(`${gateway.url}/weather`), fetch(`${gateway.url}/weather`)]);
    const [ra, rb] = [a, b].map((r) => decodePaymentRequiredHeader(r.headers.get("payment-required")!));
    expect(ra.accepts.map((t) => t.amount)).toEqual(["10000", "1000"]);
    expect(ra.accepts[1].extra).toMatchObject({
      requiredAttestations: [DEFAULT_AGENT_OWNERSHIP_SCHEMA],
      maxUse: 3,
      scope: "premium",
    });
    const challenge = (r: typeof ra) =>
      (r.extensions?.["human-proof"] as { info: { nonce: string; uri: string; statement: string } }).info;
    expect(challenge(ra)).toMatchObject({
      uri: `${gateway.url}/weather`,
      statement: "Prove a human stands behind you",
    });
    expect(challenge(ra).nonce).not.toBe(challenge(rb).nonce);
  });
});
