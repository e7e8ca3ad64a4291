import type { HttpApp } from "@humanpass/http";
import { markClientCaused, Type } from "@humanpass/http";
import type { FastifyReply } from "fastify";
import type { RouteDeps } from "./deps.ts";

/** Spec 1 bodies, verbatim. */
export const INVALID_SESSION = { error: "Invalid or expired sessionId" } as const;
export const NO_NULLIFIER_PROOF = { message: "No valid nullifier proof found in response." } as const;
export const ALREADY_VERIFIED = { message: "This person has already verified." } as const;

/**
 * Spec 1's 500 body for every token that fails verification or state resolution. The libraries' words name how the
 * verifier is built and can echo the token's own bytes, so they go to the log only.
 */
export const TOKEN_NOT_VERIFIED = { error: "The token could not be verified" } as const;

const MAX_SESSION_ID = 2n ** 63n - 1n;
const TOKEN_BODY_LIMIT = 256 * 1024;

function parseSessionId(raw: string | undefined): bigint | undefined {
  if (raw === undefined || !/^[0-9]{1,20}$/.test(raw)) return undefined;
  const id = BigInt(raw);
  return id <= MAX_SESSION_ID ? id : undefined;
}

export function callbackRoute(app: HttpApp, deps: RouteDeps): void {
  // The wallet posts the bare JWZ token with whatever content type it likes: in this scope every body is text.
  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      "*",
      { parseAs: "string", bodyLimit: TOKEN_BODY_LIMIT },
      (_request, body, done) => done(null, body),
    );
    scope.post(
      "/api/callback",
      {
        bodyLimit: TOKEN_BODY_LIMIT,
        schema: {
          summary: "Wallet callback with the signed JWZ token",
          querystring: Type.Object({ sessionId: Type.Optional(Type.String()) }),
        },
      },
      async (request, reply: FastifyReply) => {
        const counted = (outcome: string) => deps.instruments.callbacks.add(1, { outcome });
        const { sessionId: rawSessionId } = request.query as { sessionId?: string };
        const sessionId = parseSessionId(rawSessionId);
        const now = new Date(deps.clock());
        // 1. the stored request of a live session
        const stored = sessionId === undefined ? undefined : await deps.sessions.liveRequest(sessionId, now);
        if (sessionId === undefined || !stored) {
          counted("invalid_session");
          return reply.code(400).send(INVALID_SESSION);
        }
        const token = typeof request.body === "string" ? request.body.trim() : "";
        // 2.–5. full verification (off the event loop), then the V3 entry for this session and its nullifier
        let outcome: Awaited<ReturnType<typeof deps.verifier.verify>>;
        const started = performance.now();
        const took = () => (performance.now() - started) / 1000;
        try {
          outcome = await deps.verifier.verify(token, stored, sessionId);
        } catch (error) {
          deps.instruments.verificationDuration.record(took(), { outcome: "rejected" });
          counted("token_rejected");
          const message = error instanceof Error ? error.message : String(error);
          request.log.info({ sessionId: sessionId.toString(), reason: message }, "callback token rejected");
          // Spec 1 answers 500 for the wallet's bad token: the client's doing, not a fault of ours (no page).
          return markClientCaused(reply).code(500).send(TOKEN_NOT_VERIFIED);
        }
        deps.instruments.verificationDuration.record(took(), { outcome: "ok" });
        if (outcome.kind === "no_nullifier_proof") {
          counted("no_nullifier_proof");
          return reply.code(400).send(NO_NULLIFIER_PROOF);
        }
        // 6.–7. nullifier once, status, event: one transaction
        const recorded = await deps.recordVerification({
          sessionId,
          proof: outcome.proof,
          now: new Date(deps.clock()),
        });
        if (recorded === "already_verified") {
          counted("already_verified");
          return reply.code(400).send(ALREADY_VERIFIED);
        }
        if (recorded === "session_closed") {
          counted("invalid_session");
          return reply.code(400).send(INVALID_SESSION);
        }
        counted("verified");
        request.log.info({ sessionId: sessionId.toString() }, "uniqueness verified");
        return reply.code(200).send(outcome.response);
      },
    );
  });
}
