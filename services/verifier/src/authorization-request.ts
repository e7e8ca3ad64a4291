import type { VerifierSettings } from "./config.ts";
import { iden3Auth } from "./verification/iden3-modules.ts";
import type { AuthorizationRequest } from "./verification/token-verifier.ts";

export const REQUESTED_CIRCUIT_ID = "credentialAtomicQueryV3";
export const CREDENTIAL_TYPE = "UniquenessCredential";

export function callbackUrl(hostUrl: string, sessionId: number): string {
  return `${hostUrl}/api/callback?sessionId=${sessionId}`;
}

/** Spec 1: a positive integer; sent as a JSON number unless it is too large to survive as one. */
function nullifierSessionIdParam(value: string): number | string {
  const asNumber = Number(value);
  return Number.isSafeInteger(asNumber) ? asNumber : value;
}

/**
 * The authorization request of one session: one V3 proof request whose `id` is the session id. It carries the
 * session's expiry, so wallets can tell a stale QR code and the library refuses answers to it.
 */
export function buildAuthorizationRequest(
  settings: VerifierSettings,
  sessionId: number,
  expiresAt: Date,
): AuthorizationRequest {
  const request = iden3Auth.auth.createAuthorizationRequest(
    settings.reason,
    settings.audienceDid,
    callbackUrl(settings.hostUrl, sessionId),
    { expires_time: expiresAt },
  );
  request.body.scope = [
    {
      id: sessionId,
      circuitId: REQUESTED_CIRCUIT_ID as never,
      params: { nullifierSessionId: nullifierSessionIdParam(settings.nullifierSessionId) },
      query: {
        allowedIssuers: settings.allowedIssuers,
        context: settings.schemaContext,
        type: CREDENTIAL_TYPE,
      },
    },
  ];
  return request as AuthorizationRequest;
}

/** The link a wallet opens (or a phone scans): the request travels inline, base64-encoded, as `i_m`. */
export function universalLink(walletUrl: string, request: AuthorizationRequest): string {
  return `${walletUrl.replace(/\/+$/, "")}/#i_m=${Buffer.from(JSON.stringify(request)).toString("base64")}`;
}
