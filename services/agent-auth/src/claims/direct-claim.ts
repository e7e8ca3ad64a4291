import type { HumanLookup } from "@humanpass/attestations-client";
import { agentDidFromAddress, recoverMessageSigner } from "@humanpass/human-proof";
import type { Logger } from "@humanpass/telemetry";
import type { PublicTerms } from "../config.ts";
import { directChallengeMessage } from "../nonces/challenges.ts";
import type { ClaimNonces } from "../nonces/claim-nonces.ts";
import type { ClaimRecorder } from "./accept-claim.ts";
import { refuse } from "./refusals.ts";

export interface DirectClaimDeps {
  terms: PublicTerms;
  nonces: ClaimNonces;
  resolver: HumanLookup;
  recorder: ClaimRecorder;
  logger: Logger;
}

export type DirectClaimResult = { verified: true; agentDid: string; humanDid: string; humanId: string };

function stringField(body: unknown, name: string): string | undefined {
  const value = body && typeof body === "object" ? (body as Record<string, unknown>)[name] : undefined;
  return typeof value === "string" && value !== "" ? value : undefined;
}

/**
 * Spec 3, direct path: nonce consumed and fresh, signer recovered over the message issued with that nonce,
 * the ownership record listed for that address, its human's nullifier. Only the signature is trusted.
 */
export function directClaim(deps: DirectClaimDeps): (body: unknown) => Promise<DirectClaimResult> {
  const { terms, nonces, resolver, recorder, logger } = deps;
  return async (body) => {
    const nonce = stringField(body, "nonce");
    const issued = nonce ? await nonces.redeem(nonce, "direct") : null;
    if (!issued) throw refuse.unknownOrExpiredNonce();

    const message = directChallengeMessage(terms, issued.nonce, issued.issuedAt, issued.expiresAt);
    const signer = await recoverMessageSigner(message, stringField(body, "signature"));
    if (!signer) throw refuse.invalidSignature();
    const agentDid = agentDidFromAddress(signer);

    let resolution: Awaited<ReturnType<HumanLookup["byAddress"]>>;
    try {
      resolution = await resolver.byAddress(signer);
    } catch (e) {
      logger.warn({ err: (e as Error).message }, "direct claim: human lookup failed");
      throw refuse.verificationUnavailable();
    }
    if (!resolution) {
      await recorder.notRegistered(agentDid);
      throw refuse.notRegistered();
    }

    const outcome = await recorder.accept({ path: "direct", agentDid, agentAddress: signer, resolution });
    if (outcome === "already_claimed") throw refuse.alreadyClaimed();
    const { humanDid, humanId } = resolution;
    return { verified: true, agentDid, humanDid, humanId };
  };
}
