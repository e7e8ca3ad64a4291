import { HttpError } from "@humanpass/http";

/** Every refusal of spec 3's two processing orders, with its status and the `error` value callers see. */
export const refuse = {
  missingHeader: () => new HttpError(400, "missing_header", "the HUMAN-PROOF header is empty"),
  invalidHeader: () =>
    new HttpError(400, "invalid_header", "the HUMAN-PROOF header is not JSON with a nonce"),
  unknownOrExpiredNonce: () =>
    new HttpError(
      403,
      "unknown_or_expired_nonce",
      "the nonce is unknown, already used, expired or from the other path",
    ),
  wrongDomainOrResource: () =>
    new HttpError(403, "wrong_domain_or_resource", "the proof is signed for another domain or resource"),
  /** A refusal reason of `verifyHumanProofRequest`, passed through as it is. */
  proof: (reason: string) => new HttpError(403, reason, `the human proof was refused: ${reason}`),
  invalidSignature: () =>
    new HttpError(403, "invalid_signature", "no signer can be recovered from the signature"),
  notRegistered: () => new HttpError(403, "not_registered", "no verified human is paired with this agent"),
  alreadyClaimed: () => new HttpError(409, "already_claimed", "this human has already claimed"),
  verificationUnavailable: () =>
    new HttpError(
      503,
      "verification_unavailable",
      "the attestations registry cannot be read now; retry later",
      {
        "retry-after": "1",
      },
    ),
};
