import type { HumanResolution } from "@humanpass/attestations-client";
import type { VerifyContext } from "@x402/core/server";
import type { AttestationsApiOptions } from "../common/attestations.ts";

export type { HumanResolution };

export type HumanVerifiedEvent = { type: "human_verified"; resource: string } & HumanResolution;

export type HumanNotRegisteredEvent = {
  type: "human_not_registered";
  resource: string;
  did: string;
};

export type MaxUseExceededEvent = {
  type: "max_use_exceeded";
  resource: string;
  humanId: string;
  maxUse: number;
  /** The counter's namespace (`extra.scope`, default the resource URL): routes sharing it share the quota. */
  scope: string;
};

export type HumanProofEvent = HumanVerifiedEvent | HumanNotRegisteredEvent | MaxUseExceededEvent;

export type OnHumanProofEvent = (event: HumanProofEvent) => void | Promise<void>;

export type PoUVerifierOptions = AttestationsApiOptions & {
  /** Replaces the attestations-API check of extra schemas. */
  hasAttestation?: (did: string, chainId: string, schema: string) => Promise<boolean>;
  agentOwnershipSchema?: string;
};

export interface PoUVerifier {
  /** Schema checked by `lookupHuman`; hooks skip it when checking extra schemas. */
  ownershipSchema: string;
  /** The human behind an agent DID, or null when the DID is not paired. Throws when the registry cannot be read. */
  lookupHuman(did: string, chainId: string): Promise<HumanResolution | null>;
  hasAttestation?(did: string, chainId: string, schema: string): Promise<boolean>;
}

/**
 * Per-human usage counters for tiers with `extra.maxUse`.
 * Both methods must be single atomic operations on a store shared by every server instance.
 */
export interface HumanUsageStorage {
  /** Increments the (humanId, scope) counter only if it is strictly below `maxUse`; the new count, or null at the limit. */
  incrementIfBelow(humanId: string, maxUse: number, scope: string): Promise<number | null>;
  /** Decrements only if above zero; the new count, or null if nothing changed. */
  decrementIfAboveZero(humanId: string, scope: string): Promise<number | null>;
}

/**
 * Remembers which challenge nonces were redeemed, so a captured proof is accepted once. Issued nonces are never
 * stored (`ChallengeNonces` recognises them by their MAC): a row exists only per redeemed nonce, until it expires.
 */
export interface UsedNonceStore {
  /**
   * Marks `nonce` used; true when it had not been used before. `expiresAt` is when a proof with this nonce
   * is refused for age anyway, so the store may forget the nonce after it. Must be one atomic step across
   * instances (a unique key, never a read then a write).
   */
  consume(nonce: string, expiresAt: Date): Promise<boolean>;
}

/** What a proof that passed its checks takes: its nonce, and on a tier with `maxUse` one use of the human's quota. */
export type ProofAdmission = {
  nonce: string;
  /** When a proof with this nonce is refused for age anyway; the nonce may be forgotten after it. */
  nonceExpiresAt: Date;
  /** The resource paid for, as the events name it. */
  resource: string;
  /** One use to take, if the counter is below `maxUse`. */
  use?: { humanId: string; maxUse: number; scope: string };
  /** Events of the verification itself (`human_verified`, `human_not_registered`). */
  events: HumanProofEvent[];
  /**
   * The payment the proof came with, given only when the proof passed every check: a store may claim it in the
   * same step (after the use, so a payment refused at the cap claims nothing) and refuse a copy of one already
   * claimed (`AdmissionOutcome.paymentRefusal`).
   */
  payment?: { payload: VerifyContext["paymentPayload"]; requirements: VerifyContext["requirements"] };
};

export type AdmissionOutcome = {
  /** False when the nonce had been used already: nothing else was taken or recorded. */
  nonceFresh: boolean;
  /** The human's count after taking the use; null when the limit was reached or no use was asked for. */
  count: number | null;
  /**
   * Why the store refused `payment` itself (a copy of a payment it had claimed already), if it did: the nonce is
   * spent and the events recorded as for any refusal, and the hook gives the use back and refuses with it.
   */
  paymentRefusal?: string;
};

/**
 * Consumes a proof's nonce and, only when it was fresh, takes the use and records the admission's events (plus
 * `max_use_exceeded` when the use is refused), as one atomic step: a store that implements it (one statement
 * in Postgres, say: `PostgresHumanProofStore` of `@humanpass/human-proof/postgres`) replaces a `UsedNonceStore`,
 * `HumanUsageStorage.incrementIfBelow` and an event write, three round trips, by one. The hook still passes every
 * event to `onEvent` afterwards.
 */
export interface ProofAdmissions {
  admit(admission: ProofAdmission): Promise<AdmissionOutcome>;
  /**
   * Gives back the use the admission of the proof with `nonce` took, at most once, and nothing when it took none:
   * the store records which proof took which use, so a request's failure paths (the rollback hooks) find its use
   * from the proof its payment carries, not from the payment object they are handed.
   */
  refund(nonce: string): Promise<void>;
}
