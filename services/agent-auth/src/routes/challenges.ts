import { type HttpApp, Type } from "@humanpass/http";
import type { PublicTerms } from "../config.ts";
import { directChallengeMessage, helperChallenge } from "../nonces/challenges.ts";
import type { ClaimNonces } from "../nonces/claim-nonces.ts";

const SupportedChain = Type.Object({ chainId: Type.String(), type: Type.String() });

const HelperChallenge = Type.Object({
  info: Type.Object({
    domain: Type.String(),
    uri: Type.String(),
    version: Type.String(),
    nonce: Type.String(),
    issuedAt: Type.String(),
    expirationTime: Type.String(),
    statement: Type.String(),
    resources: Type.Array(Type.String()),
    requiredAttestations: Type.Array(Type.String()),
  }),
  supportedChains: Type.Array(SupportedChain),
});

const DirectChallenge = Type.Object({ nonce: Type.String(), message: Type.String() });

/** Helper path `GET /api/v1/instructions` and direct path `GET /api/v1/challenge`: a fresh nonce each call. */
export function challengeRoutes(app: HttpApp, deps: { terms: PublicTerms; nonces: ClaimNonces }): void {
  const { terms, nonces } = deps;

  app.get(
    "/api/v1/instructions",
    {
      schema: {
        summary: "Helper path: a challenge to sign with the SDK and send back in the HUMAN-PROOF header",
        response: { 200: HelperChallenge },
      },
    },
    async (_request, reply) => {
      const { nonce, issuedAt, expiresAt } = nonces.issue("helper");
      reply.header("cache-control", "no-store");
      return helperChallenge(terms, nonce, issuedAt, expiresAt);
    },
  );

  app.get(
    "/api/v1/challenge",
    {
      schema: {
        summary: "Direct path: a nonce and the text to sign (EIP-191) and post with the nonce",
        response: { 200: DirectChallenge },
      },
    },
    async (_request, reply) => {
      const { nonce, issuedAt, expiresAt } = nonces.issue("direct");
      reply.header("cache-control", "no-store");
      return { nonce, message: directChallengeMessage(terms, nonce, issuedAt, expiresAt) };
    },
  );
}
