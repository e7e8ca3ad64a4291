import type { HumanLookup } from "@humanpass/attestations-client";
import { type HumanProofChallenge, type PoUVerifier, verifyHumanProofRequest } from "@humanpass/human-proof";
import { addressFromDid } from "@humanpass/identity";
import type { Logger } from "@humanpass/telemetry";
import type { PublicTerms } from "../config.ts";
import { helperChallenge } from "../nonces/challenges.ts";
import type { ClaimNonces } from "../nonces/claim-nonces.ts";
import type { ClaimRecorder } from "./accept-claim.ts";
import { refuse } from "./refusals.ts";

export interface HelperClaimDeps {
  terms: PublicTerms;
  nonces: ClaimNonces;
  resolver: HumanLookup;
  recorder: ClaimRecorder;
  logger: Logger;
}

export type HelperClaimResult = { verified: true; agentDid: string };

type ProofHead = {
  nonce: string;
  domain?: unknown;
  uri?: unknown;
  version?: unknown;
  chainId?: unknown;
  issuedAt?: unknown;
  statement?: unknown;
  expirationTime?: unknown;
  resources?: unknown;
};

/** The fields steps 2-4 read, or undefined when the header is not a JSON object with a nonce. */
function parseHeader(header: string): ProofHead | undefined {
  let proof: unknown;
  try {
    proof = JSON.parse(header);
  } catch {
    return undefined;
  }
  const nonce = (proof as { nonce?: unknown } | null)?.nonce;
  return typeof nonce === "string" && nonce !== "" ? (proof as ProofHead) : undefined;
}

/** A field the proof carries that is not ours. An absent one is left to the SDK, which refuses it itself. */
function differs(value: unknown, ours: string): boolean {
  return value !== undefined && value !== ours;
}

/** Whether the signed `resources` are exactly the challenge's, in its order (none and an empty list sign alike). */
function sameResources(value: unknown, ours: string[] | undefined): boolean {
  const signed = value === undefined ? [] : value;
  const issued = ours ?? [];
  return Array.isArray(signed) && signed.length === issued.length && signed.every((r, i) => r === issued[i]);
}

/**
 * Every other signed field must be that of the challenge issued with the nonce: its version, its issue time (so it
 * is never in the future), its statement and expiry (a missing one is a changed one: the signed text differs), one
 * of its chains. Returns the refusal, or undefined. Domain, uri and resources were checked before (step 4); the
 * signer's address is what the signature proves.
 */
function termsProblem(proof: ProofHead, issued: HumanProofChallenge): string | undefined {
  if (proof.version !== issued.info.version) return "invalid_message";
  if (proof.issuedAt !== issued.info.issuedAt) return "invalid_issued_at";
  if (proof.statement !== issued.info.statement) return "invalid_message";
  if (proof.expirationTime !== issued.info.expirationTime) return "invalid_expiration_time";
  const offered = issued.supportedChains.some((c) => c.chainId === proof.chainId && c.type === "eip191");
  return offered ? undefined : "unsupported_chain";
}

/**
 * Spec 3, helper-based path: header present, JSON with a nonce, nonce consumed and fresh, our domain, resource
 * and resources, every other signed term of the challenge issued with the nonce, then `verifyHumanProofRequest` (signature, DID derived from the signer, human behind it).
 */
export function helperClaim(deps: HelperClaimDeps): (header: string) => Promise<HelperClaimResult> {
  const { terms, nonces, resolver, recorder, logger } = deps;
  const verifier: PoUVerifier = {
    ownershipSchema: terms.ownershipSchema,
    lookupHuman: (did) => resolver.byDid(did),
  };

  return async (header) => {
    if (header.trim() === "") throw refuse.missingHeader();
    const proof = parseHeader(header);
    if (!proof) throw refuse.invalidHeader();
    const issued = await nonces.redeem(proof.nonce, "helper");
    if (!issued) throw refuse.unknownOrExpiredNonce();
    const challenge = helperChallenge(terms, issued.nonce, issued.issuedAt, issued.expiresAt);
    if (
      differs(proof.domain, terms.domain) ||
      differs(proof.uri, terms.resource) ||
      !sameResources(proof.resources, challenge.info.resources)
    ) {
      throw refuse.wrongDomainOrResource();
    }
    const problem = termsProblem(proof, challenge);
    if (problem) throw refuse.proof(problem);

    let result: Awaited<ReturnType<typeof verifyHumanProofRequest>>;
    try {
      result = await verifyHumanProofRequest(verifier, {
        resource: terms.resource,
        humanProofHeader: header,
      });
    } catch (e) {
      logger.warn({ err: (e as Error).message }, "helper claim: human lookup failed");
      throw refuse.verificationUnavailable();
    }
    if (!result.allowed) {
      if (result.reason === "not_registered" && result.did) await recorder.notRegistered(result.did);
      throw refuse.proof(result.reason);
    }

    const agentAddress = addressFromDid(result.did) ?? result.resolution.agentAddress;
    const outcome = await recorder.accept({
      path: "helper",
      agentDid: result.did,
      agentAddress,
      resolution: result.resolution,
    });
    if (outcome === "already_claimed") throw refuse.alreadyClaimed();
    return { verified: true, agentDid: result.did };
  };
}
