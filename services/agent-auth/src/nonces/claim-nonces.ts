import type { ChallengeNonces, NonceTerms, UsedNonceStore } from "@humanpass/human-proof";
import type { Clock } from "@humanpass/service";
import type { PublicTerms } from "../config.ts";
import type { ClaimPath } from "../db/schema.ts";

/** Spec 3: a nonce is good for 5 minutes after it was issued. */
export const NONCE_LIFETIME_MS = 300_000;

export interface IssuedNonce {
  nonce: string;
  issuedAt: Date;
  expiresAt: Date;
}

/**
 * The nonces of both claim paths: issued without any storage (each carries its issue time and a MAC of the
 * service's keys over it, the domain, the resource and its path), and spent once at redemption.
 */
export interface ClaimNonces {
  issue(path: ClaimPath): IssuedNonce;
  /**
   * Spends the nonce and returns when it was issued, or null when it is not one of ours, already used, older
   * than its lifetime or issued by the other path. A nonce of ours that was fresh is spent whatever the outcome.
   */
  redeem(nonce: string, path: ClaimPath): Promise<IssuedNonce | null>;
}

const OTHER_PATH: Record<ClaimPath, ClaimPath> = { helper: "direct", direct: "helper" };

export function createClaimNonces(deps: {
  terms: PublicTerms;
  challengeNonces: ChallengeNonces;
  usedNonces: UsedNonceStore;
  clock: Clock;
}): ClaimNonces {
  const { terms, challengeNonces, usedNonces, clock } = deps;
  const boundTo = (path: ClaimPath): NonceTerms => ({
    domain: terms.domain,
    uri: terms.resource,
    purpose: path,
  });
  const issued = (nonce: string, issuedAt: number): IssuedNonce => ({
    nonce,
    issuedAt: new Date(issuedAt),
    expiresAt: new Date(issuedAt + NONCE_LIFETIME_MS),
  });

  return {
    issue(path) {
      const issuedAt = clock();
      return issued(challengeNonces.issue(boundTo(path), issuedAt), issuedAt);
    },

    async redeem(nonce, path) {
      // Neither MAC holds for anything else than what `issue` makes: refused before the store is asked.
      const ownPath = challengeNonces.issuedAt(nonce, boundTo(path));
      const issuedAt = ownPath ?? challengeNonces.issuedAt(nonce, boundTo(OTHER_PATH[path]));
      if (issuedAt === undefined || clock() - issuedAt > NONCE_LIFETIME_MS) return null;
      const redemption = issued(nonce, issuedAt);
      // One statement: of any number of concurrent claims with this nonce, exactly one redeems it; a nonce
      // presented on the other path is spent too.
      if (!(await usedNonces.consume(nonce, redemption.expiresAt))) return null;
      return ownPath === undefined ? null : redemption;
    },
  };
}
