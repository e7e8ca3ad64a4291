import { type PoUVerifier, verifyHumanProofRequest } from "@humanpass/human-proof";
import { addressFromDid } from "@humanpass/identity";
import type { Logger } from "@humanpass/telemetry";
import type { HumanResolver } from "../attestations/human-resolver";
import type { PublicTerms } from "../config";
import type { NonceStore } from "../nonces/nonce-store";
import type { ClaimRecorder } from "./accept-claim";
import { refuse } from "./refusals";

export interface HelperClaimDeps {
  terms: PublicTerms;
  nonces: NonceStore;
  resolver: HumanResolver;
  recorder: ClaimRecorder;
  logger: Logger;
}

export type HelperClaimResult = { verified: true; agentDid: string };

type ProofHead = { nonce: string; domain?: unknown; uri?: unknown };

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

/**
 * Spec 3, helper-based path: header present, JSON with a nonce, nonce consumed and fresh, our domain and
 * resource, then `verifyHumanProofRequest` (signature, DID derived from the signer, human behind it).
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
    if (!(await nonces.consume(proof.nonce, "helper"))) throw refuse.unknownOrExpiredNonce();
    if (differs(proof.domain, terms.domain) || differs(proof.uri, terms.resource)) {
      throw refuse.wrongDomainOrResource();
    }

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
