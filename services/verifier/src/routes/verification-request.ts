import type { HttpApp } from "@humanpass/http";
import { buildAuthorizationRequest } from "../authorization-request.ts";
import type { RouteDeps } from "./deps.ts";

export function verificationRequestRoute(app: HttpApp, deps: RouteDeps): void {
  app.get(
    "/api/verification-request",
    {
      schema: {
        summary: "Start a verification session",
        description:
          "Creates a session and returns its iden3 authorization request (one V3 proof request in body.scope).",
        response: { 200: { type: "object", additionalProperties: true } },
      },
    },
    async () => {
      const now = new Date(deps.clock());
      const expiresAt = new Date(now.getTime() + deps.settings.sessionTtlMs);
      const { request } = await deps.sessions.create({
        createdAt: now,
        expiresAt,
        request: (sessionId) => buildAuthorizationRequest(deps.settings, sessionId, expiresAt),
      });
      return request;
    },
  );
}
