import { didFromAddress } from "@humanpass/identity";
import type { VerifyContext } from "@x402/core/server";
import type { PaymentRequirements } from "@x402/core/types";
import { describe, expect, it } from "vitest";
import {
  account,
  challenge,
  RESOURCE,
  registry,
  resolutionFor,
  sign,
  tier,
} from "../../test/proof-fixtures.ts";
import { signHumanProofChallengeEVMUnchecked } from "../client/sign.ts";
import { DEFAULT_AGENT_OWNERSHIP_SCHEMA } from "../common/constants.ts";
import { createChallengeNonces } from "./challenge-nonces.ts";
import { declareHumanProofExtension } from "./declare.ts";
import {
  createAfterVerifyFailureRollbackHook,
  createSettleFailureRollbackHook,
  createVerifiedPaymentCanceledRollbackHook,
  createVerifyFailureRollbackHook,
  createVerifyHumanProofHook,
} from "./hooks.ts";
import { InMemoryHumanUsageStorage } from "./memory-stores.ts";
import type { HumanProofEvent, PoUVerifier, ProofAdmission } from "./types.ts";

const agent = account(1);
const secondAgentOfSameHuman = account(3);
const REVIEW = `0x${"ab".repeat(32)}`;
const did = didFromAddress(agent.address, "main");
const paired = {
  [did]: resolutionFor(agent.address, "777"),
  [didFromAddress(secondAgentOfSameHuman.address, "main")]: resolutionFor(
    secondAgentOfSameHuman.address,
    "777",
  ),
};

const gated = (extra: Record<string, unknown> = {}) =>
  tier({ requiredAttestations: [DEFAULT_AGENT_OWNERSHIP_SCHEMA], ...extra });

/** The address a proof names, which pays by default, as an honest agent does. */
function signerOf(proof: unknown): string | undefined {
  try {
    const text = typeof proof === "string" ? proof : JSON.stringify((proof as { info?: unknown })?.info);
    return (JSON.parse(text) as { address?: string }).address;
  } catch {
    return undefined;
  }
}

function context(
  requirements: PaymentRequirements,
  proof: unknown,
  declared: unknown = challenge(),
  payer: string | undefined = signerOf(proof),
): VerifyContext {
  return {
    paymentPayload: {
      x402Version: 2,
      payload: { authorization: { from: payer } },
      resource: { url: RESOURCE, description: "", mimeType: "" },
      accepted: requirements,
      extensions: proof === undefined ? {} : { "human-proof": proof },
    },
    requirements,
    declaredExtensions: { "human-proof": declared },
  };
}

function setup(
  options: { verifier?: PoUVerifier & { failing?: boolean }; maxProofAgeSeconds?: number } = {},
) {
  const verifier = options.verifier ?? registry(paired, { [did]: [REVIEW] });
  const storage = new InMemoryHumanUsageStorage();
  const events: HumanProofEvent[] = [];
  const hook = createVerifyHumanProofHook({
    verifier,
    storage,
    maxProofAgeSeconds: options.maxProofAgeSeconds,
    onEvent: (event) => {
      events.push(event);
    },
  });
  return { hook, verifier, storage, events };
}

describe("createVerifyHumanProofHook", () => {
  it("lets a tier without requiredAttestations through without looking anything up", async () => {
    const { hook, verifier } = setup();
    expect(await hook(context(tier(), undefined))).toBeUndefined();
    expect(await hook(context(tier({ requiredAttestations: [] }), undefined))).toBeUndefined();
    expect((verifier as ReturnType<typeof registry>).lookups).toEqual([]);
  });

  it("passes a valid proof, sent as Billions' JSON string or as an x402 info echo", async () => {
    const { hook, events } = setup();
    expect(await hook(context(gated(), await sign(agent)))).toBeUndefined();
    const echo = { ...challenge(), info: JSON.parse(await sign(agent)) };
    expect(await hook(context(gated(), echo))).toBeUndefined();
    expect(events.map((e) => e.type)).toEqual(["human_verified", "human_verified"]);
  });

  it("aborts with the reason of verifyHumanProofRequest", async () => {
    const { hook } = setup();
    expect(await hook(context(gated(), undefined))).toEqual({ abort: true, reason: "missing_header" });
    expect(await hook(context(gated(), "{"))).toEqual({ abort: true, reason: "invalid_header" });
    const stranger = await sign(account(9));
    expect(await hook(context(gated(), stranger))).toEqual({ abort: true, reason: "not_registered" });
  });

  it("checks the signed uri and domain against the challenge this server issued", async () => {
    const { hook } = setup();
    const issued = challenge({ uri: "https://api.example.com/other", domain: "api.example.com" });
    expect(await hook(context(gated(), await sign(agent), issued))).toEqual({
      abort: true,
      reason: "resource_mismatch",
    });
    const otherDomain = await sign(agent, { domain: "evil.example" });
    expect(await hook(context(gated(), otherDomain))).toEqual({
      abort: true,
      reason: "wrong_domain_or_resource",
    });
  });

  it("derives the expected terms from a raw declaration when no challenge was issued into it", async () => {
    const { hook } = setup();
    const declaration = declareHumanProofExtension({ domain: "pay.example.org" });
    expect(await hook(context(gated(), await sign(agent), declaration))).toEqual({
      abort: true,
      reason: "wrong_domain_or_resource",
    });
    const proof = await sign(agent, { domain: "pay.example.org" });
    expect(await hook(context(gated(), proof, declaration))).toBeUndefined();
  });

  it("accepts only nonces it issued for the signed terms, before storage or registry is asked", async () => {
    const admitted: string[] = [];
    const verifier = registry(paired);
    const hook = createVerifyHumanProofHook({
      verifier,
      admissions: {
        async admit(admission) {
          admitted.push(admission.nonce);
          return { nonceFresh: true, count: null };
        },
        async refund() {},
      },
    });
    const refused = { abort: true, reason: "unknown_or_expired_nonce" };
    // A nonce the agent or another site made up, in the shape spec 3's SDK draws.
    expect(await hook(context(gated(), await sign(agent, { nonce: "ab".repeat(16) })))).toEqual(refused);
    // Another server's nonce (other key) for exactly our terms.
    const foreign = createChallengeNonces({ keys: ["k".repeat(32)] });
    const issuedAt = new Date().toISOString();
    const theirs = foreign.issue({ domain: "api.example.com", uri: RESOURCE }, Date.parse(issuedAt));
    expect(await hook(context(gated(), await sign(agent, { nonce: theirs, issuedAt })))).toEqual(refused);
    // Our nonce, moved to another issue time: its lifetime cannot be stretched.
    const ours = JSON.parse(await sign(agent)).nonce;
    const later = new Date(Date.now() + 1000).toISOString();
    expect(await hook(context(gated(), await sign(agent, { nonce: ours, issuedAt: later })))).toEqual(
      refused,
    );
    expect(await hook(context(gated(), await sign(agent, { nonce: "x".repeat(5000) })))).toEqual(refused);
    expect(admitted).toEqual([]);
    expect(verifier.lookups).toEqual([]);
  });

  it("recognises nonces of every configured key: a key is rotated without refusing proofs in flight", async () => {
    const [oldKey, newKey] = ["o".repeat(32), "n".repeat(32)];
    const before = createChallengeNonces({ keys: [oldKey] });
    const after = createChallengeNonces({ keys: [newKey, oldKey] });
    const hook = createVerifyHumanProofHook({ verifier: registry(paired), challengeNonces: after });
    const issuedAt = new Date().toISOString();
    const terms = { domain: "api.example.com", uri: RESOURCE };
    const at = Date.parse(issuedAt);
    for (const nonce of [before.issue(terms, at), after.issue(terms, at)]) {
      expect(await hook(context(gated(), await sign(agent, { nonce, issuedAt })))).toBeUndefined();
    }
    const retired = createVerifyHumanProofHook({
      verifier: registry(paired),
      challengeNonces: createChallengeNonces({ keys: [newKey] }),
    });
    expect(
      await retired(context(gated(), await sign(agent, { nonce: before.issue(terms, at), issuedAt }))),
    ).toEqual({
      abort: true,
      reason: "unknown_or_expired_nonce",
    });
  });

  it("refuses a chain the challenge did not offer and a version other than the one issued", async () => {
    const { hook } = setup();
    const otherChain = await signHumanProofChallengeEVMUnchecked(
      { ...challenge(), supportedChains: [{ chainId: "eip155:1", type: "eip191" }] },
      agent,
      "eip155:1",
    );
    expect(await hook(context(gated(), otherChain))).toEqual({ abort: true, reason: "unsupported_chain" });
    expect(await hook(context(gated(), await sign(agent, { version: "2" })))).toEqual({
      abort: true,
      reason: "invalid_message",
    });
  });

  it("refuses a payment whose payer is not the proof's signer, unless the route allows it", async () => {
    const { hook, storage } = setup();
    const someoneElse = account(7).address;
    const capped = gated({ maxUse: 5, scope: "payer" });
    expect(await hook(context(capped, await sign(agent), challenge(), someoneElse))).toEqual({
      abort: true,
      reason: "payer_not_signer",
    });
    const signed = context(capped, await sign(agent));
    const noPayer = { ...signed, paymentPayload: { ...signed.paymentPayload, payload: {} } };
    expect(await hook(noPayer)).toEqual({
      abort: true,
      reason: "payer_not_signer",
    });
    expect(await storage.incrementIfBelow("777", 5, "payer")).toBe(1);
    const relaxed = declareHumanProofExtension({ payerMayDifferFromSigner: true, domain: "api.example.com" });
    const proof = await sign(agent);
    expect(await hook(context(capped, proof, relaxed, someoneElse))).toBeUndefined();
  });

  it("accepts a proof once: a replay of the same nonce is refused", async () => {
    const { hook } = setup();
    const proof = await sign(agent);
    expect(await hook(context(gated(), proof))).toBeUndefined();
    expect(await hook(context(gated(), proof))).toEqual({ abort: true, reason: "unknown_or_expired_nonce" });
  });

  it("spends the nonce whatever the outcome: after not_registered, a refused schema or an unreadable registry", async () => {
    const verifier = registry(paired);
    const { hook, events } = setup({ verifier });
    const stranger = await sign(account(2));
    expect(await hook(context(gated(), stranger))).toEqual({ abort: true, reason: "not_registered" });
    const needsReview = await sign(agent);
    const review = gated({ requiredAttestations: [DEFAULT_AGENT_OWNERSHIP_SCHEMA, REVIEW] });
    expect(await hook(context(review, needsReview))).toEqual({
      abort: true,
      reason: "missing_required_attestation",
    });
    const whileDown = await sign(agent);
    verifier.failing = true;
    expect(await hook(context(gated(), whileDown))).toMatchObject({ reason: "verification_unavailable" });
    verifier.failing = false;
    const reported = events.length;
    for (const proof of [stranger, needsReview, whileDown]) {
      expect(await hook(context(gated(), proof))).toEqual({
        abort: true,
        reason: "unknown_or_expired_nonce",
      });
    }
    // A replay reports nothing.
    expect(events.length).toBe(reported);
  });

  it("takes nonce, use and events in one admission when given a store that does it in one step", async () => {
    const admitted: ProofAdmission[] = [];
    const storage = new InMemoryHumanUsageStorage();
    const events: HumanProofEvent[] = [];
    const hook = createVerifyHumanProofHook({
      verifier: registry(paired),
      storage,
      admissions: {
        async admit(admission) {
          admitted.push(admission);
          const use = admission.use;
          const count = use ? await storage.incrementIfBelow(use.humanId, use.maxUse, use.scope) : null;
          return { nonceFresh: admitted.filter((a) => a.nonce === admission.nonce).length === 1, count };
        },
        async refund() {},
      },
      onEvent: (event) => {
        events.push(event);
      },
    });
    const proof = await sign(agent);
    const paid = context(gated({ maxUse: 1, scope: "s" }), proof);
    expect(await hook(paid)).toBeUndefined();
    expect(admitted).toEqual([
      {
        nonce: JSON.parse(proof).nonce,
        nonceExpiresAt: expect.any(Date),
        resource: RESOURCE,
        use: { humanId: "777", maxUse: 1, scope: "s" },
        events: [expect.objectContaining({ type: "human_verified", humanId: "777" })],
        payment: { payload: paid.paymentPayload, requirements: paid.requirements },
      },
    ]);
    expect(events.map((e) => e.type)).toEqual(["human_verified"]);
    expect(await hook(context(gated({ maxUse: 1, scope: "s" }), await sign(agent)))).toEqual({
      abort: true,
      reason: "max_use_exceeded",
    });
    expect(events.map((e) => e.type)).toEqual(["human_verified", "human_verified", "max_use_exceeded"]);
  });

  it("refuses with the store's own reason when the store refuses the payment, and gives the use back", async () => {
    const storage = new InMemoryHumanUsageStorage();
    const events: HumanProofEvent[] = [];
    const offered: ProofAdmission["payment"][] = [];
    const taken = new Map<string, { humanId: string; scope: string }>();
    const hook = createVerifyHumanProofHook({
      verifier: registry(paired),
      storage,
      admissions: {
        async admit({ nonce, use, payment }) {
          offered.push(payment);
          const count = use ? await storage.incrementIfBelow(use.humanId, use.maxUse, use.scope) : null;
          if (use && count !== null) taken.set(nonce, use);
          return { nonceFresh: true, count, paymentRefusal: "duplicate_payment" };
        },
        async refund(nonce) {
          const use = taken.get(nonce);
          taken.delete(nonce);
          if (use) await storage.decrementIfAboveZero(use.humanId, use.scope);
        },
      },
      onEvent: (event) => {
        events.push(event);
      },
    });
    const capped = gated({ maxUse: 5, scope: "copy" });
    expect(await hook(context(capped, await sign(agent)))).toEqual({
      abort: true,
      reason: "duplicate_payment",
    });
    expect(await storage.incrementIfBelow("777", 5, "copy")).toBe(1);
    expect(events.map((e) => e.type)).toEqual(["human_verified"]);
    // A proof refused on its own merits offers the store no payment to claim.
    expect(await hook(context(capped, await sign(account(2))))).toEqual({
      abort: true,
      reason: "not_registered",
    });
    expect(offered.map((payment) => payment !== undefined)).toEqual([true, false]);
  });

  it("enforces its own proof lifetime even when the agent dropped expirationTime", async () => {
    const { hook } = setup({ maxProofAgeSeconds: 300 });
    const old = await sign(agent, { issuedAt: new Date(Date.now() - 301_000).toISOString() });
    expect(await hook(context(gated(), old))).toEqual({ abort: true, reason: "message_expired" });
    const future = await sign(agent, { issuedAt: new Date(Date.now() + 300_000).toISOString() });
    expect(await hook(context(gated(), future))).toEqual({ abort: true, reason: "invalid_issued_at" });
  });

  it("refuses with verification_unavailable, never lets through, when the registry cannot be read", async () => {
    const verifier = registry(paired);
    const { hook } = setup({ verifier });
    verifier.failing = true;
    expect(await hook(context(gated(), await sign(agent)))).toMatchObject({
      abort: true,
      reason: "verification_unavailable",
    });
    verifier.failing = false;
    expect(await hook(context(gated(), await sign(agent)))).toBeUndefined();
  });

  it("checks schemas beyond the ownership schema", async () => {
    const { hook } = setup();
    const needsReview = gated({ requiredAttestations: [DEFAULT_AGENT_OWNERSHIP_SCHEMA, REVIEW] });
    expect(await hook(context(needsReview, await sign(agent)))).toBeUndefined();
    const needsOther = gated({
      requiredAttestations: [DEFAULT_AGENT_OWNERSHIP_SCHEMA, `0x${"cd".repeat(32)}`],
    });
    expect(await hook(context(needsOther, await sign(agent)))).toEqual({
      abort: true,
      reason: "missing_required_attestation",
    });
    const { hasAttestation: _, ...withoutCheck } = registry(paired);
    const { hook: limited } = setup({ verifier: withoutCheck });
    expect(await limited(context(needsReview, await sign(agent)))).toEqual({
      abort: true,
      reason: "verifier_cannot_check_attestations",
    });
  });

  it("refuses a bad maxUse and a maxUse without storage", async () => {
    const { hook } = setup();
    for (const maxUse of [0, -1, 1.5, "3", Number.POSITIVE_INFINITY]) {
      expect(await hook(context(gated({ maxUse }), await sign(agent)))).toEqual({
        abort: true,
        reason: "invalid_max_use_value",
      });
    }
    const withoutStorage = createVerifyHumanProofHook({ verifier: registry(paired) });
    expect(await withoutStorage(context(gated({ maxUse: 1 }), await sign(agent)))).toEqual({
      abort: true,
      reason: "misconfigured_max_use_storage",
    });
  });

  it("counts uses per human and scope: two agents of one human share the quota", async () => {
    const { hook, storage, events } = setup();
    const capped = gated({ maxUse: 2, scope: "weather" });
    expect(await hook(context(capped, await sign(agent)))).toBeUndefined();
    expect(await hook(context(capped, await sign(secondAgentOfSameHuman)))).toBeUndefined();
    expect(await hook(context(capped, await sign(agent)))).toEqual({
      abort: true,
      reason: "max_use_exceeded",
    });
    expect(events.at(-1)).toEqual({
      type: "max_use_exceeded",
      resource: RESOURCE,
      humanId: "777",
      maxUse: 2,
      scope: "weather",
    });
    expect(await storage.incrementIfBelow("777", 2, "weather")).toBeNull();
    // Without a scope the counter is per resource URL.
    expect(await hook(context(gated({ maxUse: 1 }), await sign(agent)))).toBeUndefined();
    expect(await storage.incrementIfBelow("777", 1, RESOURCE)).toBeNull();
    expect(await hook(context(gated({ maxUse: 1 }), await sign(agent)))).toEqual({
      abort: true,
      reason: "max_use_exceeded",
    });
    expect(events.at(-1)).toMatchObject({ type: "max_use_exceeded", scope: RESOURCE });
  });
});

describe("rollback hooks", () => {
  async function usedOnce() {
    const { hook, storage } = setup();
    const ctx = context(gated({ maxUse: 1, scope: "s" }), await sign(agent));
    expect(await hook(ctx)).toBeUndefined();
    return { storage, ctx };
  }
  const settleContext = (ctx: VerifyContext) => ({ ...ctx, phase: "after-handler" as const });

  it("gives the quota back when the facilitator finds the payment invalid, not when valid", async () => {
    const { storage, ctx } = await usedOnce();
    const rollback = createAfterVerifyFailureRollbackHook({ storage });
    await rollback({ ...ctx, result: { isValid: true } });
    expect(await storage.incrementIfBelow("777", 1, "s")).toBeNull();
    await rollback({ ...ctx, result: { isValid: false, invalidReason: "insufficient_funds" } });
    expect(await storage.incrementIfBelow("777", 1, "s")).toBe(1);
  });

  it("gives the quota back when verification throws", async () => {
    const { storage, ctx } = await usedOnce();
    await createVerifyFailureRollbackHook({ storage })({ ...ctx, error: new Error("facilitator down") });
    expect(await storage.incrementIfBelow("777", 1, "s")).toBe(1);
  });

  it("gives the quota back once, even when settlement fails and the payment is also canceled", async () => {
    const { storage, ctx } = await usedOnce();
    await storage.incrementIfBelow("777", 5, "s"); // a second, unrelated use of the same human
    await createSettleFailureRollbackHook({ storage })({
      ...settleContext(ctx),
      error: new Error("reverted"),
    });
    await createVerifiedPaymentCanceledRollbackHook({ storage })({
      ...settleContext(ctx),
      reason: "handler_failed",
      settledPhases: [],
    });
    expect(await storage.decrementIfAboveZero("777", "s")).toBe(0);
    expect(await storage.decrementIfAboveZero("777", "s")).toBeNull();
  });

  it("gives the quota back when the handler fails after verification", async () => {
    const { storage, ctx } = await usedOnce();
    await createVerifiedPaymentCanceledRollbackHook({ storage })({
      ...settleContext(ctx),
      reason: "handler_threw",
      settledPhases: [],
    });
    expect(await storage.incrementIfBelow("777", 1, "s")).toBe(1);
  });

  it("keeps a copied payload's human: a deep copy of the payment gives back the use its proof took, once", async () => {
    const { storage, ctx } = await usedOnce();
    const copy = structuredClone(ctx);
    expect(copy.paymentPayload).not.toBe(ctx.paymentPayload);
    await createSettleFailureRollbackHook({ storage })({
      ...settleContext(copy),
      error: new Error("reverted"),
    });
    await createSettleFailureRollbackHook({ storage })({
      ...settleContext(structuredClone(ctx)),
      error: new Error("reverted"),
    });
    expect(await storage.incrementIfBelow("777", 1, "s")).toBe(1);
    expect(await storage.incrementIfBelow("777", 1, "s")).toBeNull();
  });

  it("gives nothing back for a standard tier's payment carrying a proof another request admitted", async () => {
    const { storage, ctx } = await usedOnce();
    // Only the human tier's request admitted the proof; a payment of another tier may echo any proof.
    const standard = { ...ctx, requirements: tier() };
    await createVerifiedPaymentCanceledRollbackHook({ storage })({
      ...settleContext(standard),
      reason: "handler_failed",
      settledPhases: [],
    });
    expect(await storage.incrementIfBelow("777", 1, "s")).toBeNull();
  });

  it("leaves counters alone for payments whose hook took no quota", async () => {
    const { storage } = setup();
    await storage.incrementIfBelow("777", 5, "s");
    const unrelated = context(gated({ maxUse: 5, scope: "s" }), await sign(agent));
    await createVerifyFailureRollbackHook({ storage })({ ...unrelated, error: new Error("x") });
    expect(await storage.decrementIfAboveZero("777", "s")).toBe(0);
  });
});
