/**
 * Every refusal reason reaches the paying client in the 402's payment-required `error`, through the real
 * x402 flow (the generic echo check must not mask them). Each case sends a proof built from the server's own
 * challenge, then altered.
 */
import { x402Client } from "@x402/core/client";
import type { PaymentOption } from "@x402/core/http";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import type { RoutesConfig } from "@x402/core/server";
import type { PaymentPayload, PaymentRequired } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  configureHumanProofServer,
  createPoUVerifier,
  DEFAULT_AGENT_OWNERSHIP_SCHEMA,
  declareHumanProofExtension,
  type HumanProofChallenge,
  type HumanProofExtensionInfo,
  InMemoryHumanUsageStorage,
  type PoUVerifier,
  signHumanProofChallengeEVMUnchecked,
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

const key = (n: number) => `0x${n.toString(16).padStart(64, "0")}` as const;
const paired = privateKeyToAccount(key(21));
const unpaired = privateKeyToAccount(key(22));
const human = humanFromAddress(privateKeyToAccount(key(2000)).address);
const OTHER_SCHEMA = `0x${"cd".repeat(32)}`;

const gated = (extra: Record<string, unknown> = {}): PaymentOption => ({
  scheme: "exact",
  network: NETWORK,
  payTo: "0x00000000000000000000000000000000000000aa",
  price: { amount: "500", asset: ASSET, extra: { name: "USD Coin", version: "2" } },
  extra: { requiredAttestations: [DEFAULT_AGENT_OWNERSHIP_SCHEMA], ...extra },
});
const declared = { "human-proof": declareHumanProofExtension({ expirationSeconds: 900 }) };
const routes: RoutesConfig = {
  "GET /gated": { accepts: [gated()], extensions: declared },
  "GET /undeclared": { accepts: [gated()] },
  "GET /reviewed": {
    accepts: [gated({ requiredAttestations: [DEFAULT_AGENT_OWNERSHIP_SCHEMA, OTHER_SCHEMA] })],
    extensions: declared,
  },
  "GET /bad-max-use": { accepts: [gated({ maxUse: 0 })], extensions: declared },
  "GET /capped": { accepts: [gated({ maxUse: 1 })], extensions: declared },
};

let api: AttestationsApiStandIn;
let strict: PaidHttpServer;
let bare: PaidHttpServer;

beforeAll(async () => {
  api = await startAttestationsApiStandIn({
    attestations: [ownershipAttestation(human, paired.address)],
    nullifiers: { [human.id]: "5150" },
  });
  const verifier = createPoUVerifier({
    attestationsApiBaseUrl: api.attestationsUrl,
    nullifierApiBaseUrl: api.nullifierUrl,
  });
  strict = await startPaidHttpServer(routes, new ScriptedFacilitator(), (server) =>
    configureHumanProofServer(server, { verifier, storage: new InMemoryHumanUsageStorage() }),
  );
  // A custom verifier that cannot check extra schemas, and no usage storage.
  const lookupOnly: PoUVerifier = {
    ownershipSchema: verifier.ownershipSchema,
    lookupHuman: verifier.lookupHuman,
  };
  bare = await startPaidHttpServer(routes, new ScriptedFacilitator(), (server) =>
    configureHumanProofServer(server, { verifier: lookupOnly }),
  );
});
afterAll(async () => {
  await strict.close();
  await bare.close();
  await api.close();
});

type Alteration = {
  info?: Partial<HumanProofExtensionInfo>;
  proof?: (proof: Record<string, unknown>) => string;
};

/** A client whose human-proof extension signs the server's challenge with `alteration` applied. */
function payWith(account = paired, alteration: Alteration = {}) {
  const signer = {
    address: account.address,
    signMessage: (message: string) => account.signMessage({ message }),
  };
  const client = new x402Client().register("eip155:*", new ExactEvmScheme(account)).setSpendControls(false);
  client.registerExtension({
    key: "human-proof",
    async enrichPaymentPayload(payload: PaymentPayload, paymentRequired: PaymentRequired) {
      const issued = paymentRequired.extensions?.["human-proof"] as HumanProofChallenge | undefined;
      if (!issued) return payload;
      const challenge = { ...issued, info: { ...issued.info, ...alteration.info } };
      const text = await signHumanProofChallengeEVMUnchecked(challenge, signer, NETWORK);
      const proof = alteration.proof ? alteration.proof(JSON.parse(text)) : text;
      return { ...payload, extensions: { ...payload.extensions, "human-proof": proof } };
    },
  });
  return wrapFetchWithPayment(fetch, client);
}

async function reason(response: Response): Promise<string | undefined> {
  expect(response.status).toBe(402);
  const header = response.headers.get("payment-required");
  return header ? decodePaymentRequiredHeader(header).error : undefined;
}

const past = () => new Date(Date.now() - 60_000).toISOString();

describe("every refusal reason reaches the client", () => {
  const cases: [string, () => Promise<Response>][] = [
    ["missing_header", () => payWith()(`${strict.url}/undeclared`)],
    ["invalid_header", () => payWith(paired, { proof: () => "{not json" })(`${strict.url}/gated`)],
    [
      "invalid_message",
      () => payWith(paired, { proof: ({ nonce: _, ...p }) => JSON.stringify(p) })(`${strict.url}/gated`),
    ],
    [
      "resource_mismatch",
      () => payWith(paired, { info: { uri: `${strict.url}/gated/` } })(`${strict.url}/gated`),
    ],
    ["invalid_issued_at", () => payWith(paired, { info: { issuedAt: "today" } })(`${strict.url}/gated`)],
    [
      "invalid_expiration_time",
      () => payWith(paired, { info: { expirationTime: "later" } })(`${strict.url}/gated`),
    ],
    ["message_expired", () => payWith(paired, { info: { expirationTime: past() } })(`${strict.url}/gated`)],
    [
      "invalid_signature_type",
      () =>
        payWith(paired, { proof: (p) => JSON.stringify({ ...p, type: "eip1271" }) })(`${strict.url}/gated`),
    ],
    [
      "invalid_signature",
      () =>
        payWith(paired, { proof: (p) => JSON.stringify({ ...p, address: unpaired.address }) })(
          `${strict.url}/gated`,
        ),
    ],
    ["not_registered", () => payWith(unpaired)(`${strict.url}/gated`)],
    ["missing_required_attestation", () => payWith()(`${strict.url}/reviewed`)],
    ["verifier_cannot_check_attestations", () => payWith()(`${bare.url}/reviewed`)],
    ["invalid_max_use_value", () => payWith()(`${strict.url}/bad-max-use`)],
    ["misconfigured_max_use_storage", () => payWith()(`${bare.url}/capped`)],
    [
      "wrong_domain_or_resource",
      () => payWith(paired, { info: { domain: "evil.example" } })(`${strict.url}/gated`),
    ],
  ];

  for (const [expected, request] of cases) {
    it(expected, async () => {
      expect(await reason(await request())).toBe(expected);
    });
  }

  it("max_use_exceeded", async () => {
    expect((await payWith()(`${strict.url}/capped`)).status).toBe(200);
    expect(await reason(await payWith()(`${strict.url}/capped`))).toBe("max_use_exceeded");
  });

  it("unknown_or_expired_nonce, for a replayed payment", async () => {
    let replay: string | undefined;
    const response = await payWith(paired, {
      proof: (p) => {
        replay = JSON.stringify(p);
        return replay;
      },
    })(`${strict.url}/gated`);
    expect(response.status).toBe(200);
    const again = await payWith(paired, { proof: () => replay as string })(`${strict.url}/gated`);
    expect(await reason(again)).toBe("unknown_or_expired_nonce");
  });
});
