import type { HumanProofChallenge } from "@humanpass/human-proof";
import type { PublicTerms } from "../config.ts";

/**
 * The text an agent signs on the direct path: the application's domain, the resource, the nonce and the
 * times, one per line, so a signature made for another site, resource or nonce cannot be replayed here.
 */
export function directChallengeMessage(
  terms: PublicTerms,
  nonce: string,
  issuedAt: Date,
  expiresAt: Date,
): string {
  return [
    `${terms.domain} asks you to prove that you control this agent's key.`,
    "",
    terms.statement,
    "",
    `URI: ${terms.resource}`,
    `Nonce: ${nonce}`,
    `Issued At: ${issuedAt.toISOString()}`,
    `Expiration Time: ${expiresAt.toISOString()}`,
  ].join("\n");
}

/** The helper-path challenge (spec 3 `Challenge`), in the shape `signHumanProofChallengeEVM` takes. */
export function helperChallenge(terms: PublicTerms, nonce: string, issuedAt: Date, expiresAt: Date) {
  return {
    info: {
      domain: terms.domain,
      uri: terms.resource,
      version: "1",
      nonce,
      issuedAt: issuedAt.toISOString(),
      expirationTime: expiresAt.toISOString(),
      statement: terms.statement,
      resources: [terms.resource],
      requiredAttestations: [terms.ownershipSchema],
    },
    supportedChains: [{ chainId: terms.chainId, type: "eip191" as const }],
  } satisfies HumanProofChallenge;
}
