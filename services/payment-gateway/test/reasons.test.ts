/**
 * Every refusal reason of spec 3's table reaches the paying client in the 402's payment-required `error`,
 * one test each, through real x402 clients; plus the two checks our hook adds (domain, nonce single use).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { buildDIDFromAddress, createPoUVerifier, type PoUVerifier } from "@humanpass/human-proof";
import { eventually } from "@humanpass/testing";
import { type ClientExtension, x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from "@x402/core/types";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { type Hex, keccak256, toHex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  agentFetch,
  type ChallengeEdit,
  humanTierOnlyFetch,
  type ProofEdit,
  paymentError,
  rawProofExtension,
} from "./support/agents.ts";
import { demoRoute, type Gateway, humanTier, type Stack, standardTier, startStack } from "./support/stack.ts";

let stack: Stack;
let gateway: Gateway;
let limitedVerifier: Gateway;

const EXTRA_SCHEMA = keccak256(toHex("premium-membership"));
const PAIRED = 1;
const UNPAIRED = 2;

const human = (n: number) => privateKeyToAccount(`0x${n.toString(16).padStart(64, "0")}` as Hex).address;

beforeAll(async () => {
  stack = await startStack("pg_reasons");
  const { network } = stack;
  const routes = [
    demoRoute("/gated", [standardTier(network, "10000"), humanTier(network, "1000")]),
    demoRoute("/needs-extra", [
      humanTier(network, "1000", { requiredAttestations: ["$ownership", EXTRA_SCHEMA] }),
    ]),
    demoRoute("/once", [humanTier(network, "1000", { maxUse: 1, scope: "once" })]),
    demoRoute("/bad-max-use", [
      { ...humanTier(network, "1000"), extra: { requiredAttestations: ["$ownership"], maxUse: 0 } },
    ]),
    demoRoute("/capped", [humanTier(network, "1000", { maxUse: 3 })]),
  ];
  gateway = await stack.startGateway({ routes, unchecked: true });
  const full = stack.verifier();
  const withoutAttestationCheck: PoUVerifier = {
    ownershipSchema: full.ownershipSchema,
    lookupHuman: (did, chainId) => full.lookupHuman(did, chainId),
  };
  limitedVerifier = await stack.startGateway({ routes, unchecked: true, verifier: withoutAttestationCheck });
  await stack.attestations.pairAgent(privateKeyToAccount(stack.agentKey(PAIRED)).address, human(201), "2001");
});

afterAll(async () => {
  await stack?.close();
});

async function refusal(options: {
  url: string;
  agent?: number;
  edit?: ProofEdit;
  beforeSigning?: ChallengeEdit;
}) {
  const pay = humanTierOnlyFetch(
    stack.agentKey(options.agent ?? PAIRED),
    { network: stack.network, usdc: stack.devnet.addresses.usdc },
    options.edit,
    options.beforeSigning,
  );
  const response = await pay(options.url);
  expect(response.status).toBe(402);
  return paymentError(response);
}

/** A payment payload for `url` as an x402 client builds it from the 402, for tests that send it themselves. */
async function signedPayment(
  url: string,
  choose: (required: PaymentRequired) => PaymentRequirements,
  extension?: ClientExtension,
  key: Hex = stack.agentKey(PAIRED),
): Promise<PaymentPayload> {
  const unpaid = await fetch(url);
  const required = decodePaymentRequiredHeader(unpaid.headers.get("payment-required")!);
  const client = new x402Client(() => choose(required)).setSpendControls({
    allowedAssets: [{ network: stack.network, asset: stack.devnet.addresses.usdc }],
  });
  registerExactEvmScheme(client, { signer: privateKeyToAccount(key) });
  if (extension) client.registerExtension(extension);
  return client.createPaymentPayload(required);
}

const hoursAgo = (h: number) => new Date(Date.now() - h * 3_600_000).toISOString();

describe("402 payment-required error", () => {
  it("missing_header: the payment payload has no human proof", async () => {
    // x402 clients echo the server's extensions; an agent without the human-proof extension may also send none.
    const url = `${gateway.url}/gated`;
    const payload = await signedPayment(url, (required) => required.accepts[1]);
    delete payload.extensions;
    const response = await fetch(url, {
      headers: { "payment-signature": encodePaymentSignatureHeader(payload) },
    });
    expect(response.status).toBe(402);
    expect(paymentError(response)).toBe("missing_header");
  });

  it("invalid_header: an x402 client without the human-proof extension echoes the bare challenge", async () => {
    const pay = agentFetch(stack.agentKey(PAIRED), {
      network: stack.network,
      usdc: stack.devnet.addresses.usdc,
      selector: (_v, r) => r[1],
    });
    const response = await pay(`${gateway.url}/gated`);
    expect(response.status).toBe(402);
    expect(paymentError(response)).toBe("invalid_header");
  });

  it("invalid_header: the proof is not JSON", async () => {
    expect(await refusal({ url: `${gateway.url}/gated`, edit: () => "{not json" })).toBe("invalid_header");
  });

  it("invalid_header: the proof lacks its signature", async () => {
    expect(await refusal({ url: `${gateway.url}/gated`, edit: ({ signature: _s, ...proof }) => proof })).toBe(
      "invalid_header",
    );
  });

  it("invalid_message: the signed message lacks its version", async () => {
    expect(await refusal({ url: `${gateway.url}/gated`, edit: ({ version: _v, ...proof }) => proof })).toBe(
      "invalid_message",
    );
  });

  it("resource_mismatch: the proof was signed for another resource", async () => {
    const other = `${gateway.url}/another`;
    expect(
      await refusal({ url: `${gateway.url}/gated`, beforeSigning: (info) => ({ ...info, uri: other }) }),
    ).toBe("resource_mismatch");
  });

  it("invalid_issued_at: issuedAt is not a date", async () => {
    expect(
      await refusal({
        url: `${gateway.url}/gated`,
        beforeSigning: (info) => ({ ...info, issuedAt: "yesterday" }),
      }),
    ).toBe("invalid_issued_at");
  });

  it("invalid_expiration_time: expirationTime is not a date", async () => {
    expect(
      await refusal({
        url: `${gateway.url}/gated`,
        beforeSigning: (info) => ({ ...info, expirationTime: "soon" }),
      }),
    ).toBe("invalid_expiration_time");
  });

  it("message_expired: expirationTime has passed", async () => {
    expect(
      await refusal({
        url: `${gateway.url}/gated`,
        beforeSigning: (info) => ({ ...info, expirationTime: hoursAgo(1) }),
      }),
    ).toBe("message_expired");
  });

  it("invalid_signature_type: an eip1271 (smart wallet) proof", async () => {
    expect(
      await refusal({ url: `${gateway.url}/gated`, edit: (proof) => ({ ...proof, type: "eip1271" }) }),
    ).toBe("invalid_signature_type");
  });

  it("invalid_signature: the proof claims another address than the signer's", async () => {
    const someoneElse = privateKeyToAccount(stack.agentKey(5)).address;
    expect(
      await refusal({ url: `${gateway.url}/gated`, edit: (proof) => ({ ...proof, address: someoneElse }) }),
    ).toBe("invalid_signature");
  });

  it("not_registered: no verified human stands behind the agent", async () => {
    expect(await refusal({ url: `${gateway.url}/gated`, agent: UNPAIRED })).toBe("not_registered");
    const did = buildDIDFromAddress(privateKeyToAccount(stack.agentKey(UNPAIRED)).address);
    await eventually(() => stack.events.find((e) => e.type === "human_not_registered" && e.data.did === did));
  });

  it("missing_required_attestation: a schema beyond ownership is not held", async () => {
    expect(await refusal({ url: `${gateway.url}/needs-extra` })).toBe("missing_required_attestation");
  });

  it("verifier_cannot_check_attestations: a verifier without hasAttestation and an extra schema required", async () => {
    expect(await refusal({ url: `${limitedVerifier.url}/needs-extra` })).toBe(
      "verifier_cannot_check_attestations",
    );
  });

  it("invalid_max_use_value: extra.maxUse is not a positive integer", async () => {
    expect(await refusal({ url: `${gateway.url}/bad-max-use` })).toBe("invalid_max_use_value");
  });

  it("max_use_exceeded: the human used every allowed use of the scope", async () => {
    const pay = humanTierOnlyFetch(stack.agentKey(PAIRED), {
      network: stack.network,
      usdc: stack.devnet.addresses.usdc,
    });
    expect((await pay(`${gateway.url}/once`)).status).toBe(200);
    expect(await refusal({ url: `${gateway.url}/once` })).toBe("max_use_exceeded");
  });
});

describe("checks beyond Billions' server", () => {
  it("wrong_domain_or_resource: the proof was signed for another domain", async () => {
    expect(
      await refusal({
        url: `${gateway.url}/gated`,
        beforeSigning: (info) => ({ ...info, domain: "evil.example" }),
      }),
    ).toBe("wrong_domain_or_resource");
  });

  it("invalid_payment_payload: a payment that cannot pay the tier is refused before the human lookup", async () => {
    const full = stack.verifier();
    const lookups: string[] = [];
    const counting: PoUVerifier = {
      ownershipSchema: full.ownershipSchema,
      lookupHuman: (did, chainId) => {
        lookups.push(did);
        return full.lookupHuman(did, chainId);
      },
    };
    const watched = await stack.startGateway({
      routes: [demoRoute("/gated", [standardTier(stack.network, "10000"), humanTier(stack.network, "1000")])],
      verifier: counting,
    });
    const url = `${watched.url}/gated`;
    const edits: Array<(authorization: Record<string, string>, payload: Record<string, unknown>) => void> = [
      (a) => {
        a.value = "1";
      },
      (a) => {
        a.to = a.from;
      },
      (a) => {
        a.validBefore = "1";
      },
      (a) => {
        a.nonce = "0x01";
      },
      (_a, p) => {
        p.signature = "0x1234";
      },
      (_a, p) => {
        delete p.authorization;
      },
    ];
    for (const edit of edits) {
      const payment = await signedPayment(
        url,
        (required) => required.accepts[1],
        rawProofExtension(stack.agentKey(PAIRED)),
      );
      const payload = payment.payload as Record<string, unknown>;
      edit(payload.authorization as Record<string, string>, payload);
      const response = await fetch(url, {
        headers: { "payment-signature": encodePaymentSignatureHeader(payment) },
      });
      expect(response.status).toBe(402);
      expect(paymentError(response)).toBe("invalid_payment_payload");
    }
    expect(lookups).toEqual([]);
  });

  it("invalid_payment_payload: a bogus EIP-3009 signature from a fresh key costs no attestations lookup", async () => {
    // Every request the gateway sends the attestations-api passes here and is counted.
    const lookups: string[] = [];
    const counter = createServer(async (request, response) => {
      lookups.push(request.url ?? "");
      const answer = await fetch(`${stack.attestations.url}${request.url}`, {
        headers: { accept: "application/json" },
      });
      response.writeHead(answer.status, {
        "content-type": answer.headers.get("content-type") ?? "application/json",
      });
      response.end(Buffer.from(await answer.arrayBuffer()));
    });
    await new Promise<void>((resolve) => counter.listen(0, "127.0.0.1", resolve));
    const counterUrl = `http://127.0.0.1:${(counter.address() as AddressInfo).port}`;
    const watched = await stack.startGateway({
      routes: [demoRoute("/gated", [standardTier(stack.network, "10000"), humanTier(stack.network, "1000")])],
      verifier: createPoUVerifier({ attestationsApiUrl: counterUrl }),
    });
    const url = `${watched.url}/gated`;
    const freshPayment = (key: Hex) =>
      signedPayment(url, (required) => required.accepts[1], rawProofExtension(key), key);

    try {
      // A fresh key with a genuine signature is looked up (and is no one's agent): the counter counts.
      const genuine = await fetch(url, {
        headers: {
          "payment-signature": encodePaymentSignatureHeader(await freshPayment(generatePrivateKey())),
        },
      });
      expect(paymentError(genuine)).toBe("not_registered");
      expect(lookups.length).toBeGreaterThan(0);
      lookups.length = 0;

      for (let i = 0; i < 10; i++) {
        const payment = await freshPayment(generatePrivateKey());
        const payload = payment.payload as { signature: Hex };
        // Half sign with yet another fresh key, half carry the payer's signature with one byte changed.
        payload.signature =
          i % 2 === 0
            ? ((await freshPayment(generatePrivateKey())).payload as { signature: Hex }).signature
            : (`${payload.signature.slice(0, 10)}${payload.signature[10] === "0" ? "1" : "0"}${payload.signature.slice(11)}` as Hex);
        const response = await fetch(url, {
          headers: { "payment-signature": encodePaymentSignatureHeader(payment) },
        });
        expect(response.status).toBe(402);
        expect(paymentError(response)).toBe("invalid_payment_payload");
      }
      expect(lookups).toEqual([]);
    } finally {
      await new Promise((resolve) => counter.close(resolve));
    }
  });

  it("unknown_or_expired_nonce: a captured payment with its proof is refused when replayed", async () => {
    // Capture the payment header an honest agent sends, let it through once, then replay it verbatim.
    const url = `${gateway.url}/capped`;
    const payload = await signedPayment(
      url,
      (required) => required.accepts[0],
      rawProofExtension(stack.agentKey(PAIRED)),
    );
    const header = { "payment-signature": encodePaymentSignatureHeader(payload) };

    expect((await fetch(url, { headers: header })).status).toBe(200);
    const replay = await fetch(url, { headers: header });
    expect(replay.status).toBe(402);
    expect(paymentError(replay)).toBe("unknown_or_expired_nonce");
  });
});
