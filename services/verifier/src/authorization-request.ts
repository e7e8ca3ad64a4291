import { randomUUID } from "node:crypto";
import type { VerifierSettings } from "./config.ts";
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

const unixSeconds = (date: Date) => Math.floor(date.getTime() / 1000);

/**
 * The authorization request of one session: one V3 proof request whose `id` is the session id. It carries the
 * session's expiry, so wallets can tell a stale QR code and the library refuses answers to it.
 *
 * The message is the one @iden3/js-iden3-auth's createAuthorizationRequest builds (a test holds the two equal), but
 * written here: the library is over a second of CPU to load, and with this the main thread never loads it, so a
 * restarted replica is ready as soon as its first verification thread is (the threads load it, and resolve states).
 */
export function buildAuthorizationRequest(
  settings: VerifierSettings,
  sessionId: number,
  expiresAt: Date,
): AuthorizationRequest {
  const id = randomUUID();
  const request: AuthorizationRequest = {
    id,
    thid: id,
    from: settings.audienceDid,
    typ: "application/iden3comm-plain-json" as AuthorizationRequest["typ"],
    type: "https://iden3-communication.io/authorization/1.0/request" as AuthorizationRequest["type"],
    body: {
      accept: undefined,
      reason: settings.reason,
      message: undefined,
      callbackUrl: callbackUrl(settings.hostUrl, sessionId),
      scope: [],
    },
    created_time: unixSeconds(new Date()),
    expires_time: unixSeconds(expiresAt),
  };
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
