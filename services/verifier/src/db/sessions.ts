import { randomInt } from "node:crypto";
import type { Kysely } from "@humanpass/db";
import type { AuthorizationRequest } from "../verification/token-verifier.ts";
import type { SessionStatus, VerifierDatabase } from "./schema.ts";

/**
 * Session ids are the proof request's `id`, which iden3comm wallets read as an unsigned 32-bit integer, so they
 * are drawn uniformly from 1 … 2^32-1 (the reference used 0 … 9999) and kept unique by the primary key.
 */
export const MAX_SESSION_ID = 2 ** 32 - 1;
const MAX_ATTEMPTS = 8;

export function randomSessionId(): number {
  return randomInt(1, MAX_SESSION_ID + 1);
}

export interface NewSession {
  createdAt: Date;
  expiresAt: Date;
  /** Builds the stored request for the id that was drawn. */
  request: (sessionId: number) => AuthorizationRequest;
}

/** Inserts under a fresh random id, drawing again when the id is taken. */
export async function createSession(
  db: Kysely<VerifierDatabase>,
  session: NewSession,
  drawId: () => number = randomSessionId,
): Promise<{ sessionId: number; request: AuthorizationRequest }> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const sessionId = drawId();
    const request = session.request(sessionId);
    const inserted = await db
      .insertInto("sessions")
      .values({
        session_id: String(sessionId),
        request: JSON.stringify(request),
        status: "pending",
        created_at: session.createdAt,
        expires_at: session.expiresAt,
      })
      .onConflict((oc) => oc.column("session_id").doNothing())
      .returning("session_id")
      .executeTakeFirst();
    if (inserted) return { sessionId, request };
  }
  throw new Error(`no free session id after ${MAX_ATTEMPTS} attempts`);
}

/** The stored request of a session that has not expired at `now`. */
export async function findLiveSessionRequest(
  db: Kysely<VerifierDatabase>,
  sessionId: bigint,
  now: Date,
): Promise<AuthorizationRequest | undefined> {
  const row = await db
    .selectFrom("sessions")
    .select("request")
    .where("session_id", "=", sessionId.toString())
    .where("expires_at", ">", now)
    .executeTakeFirst();
  return row?.request as AuthorizationRequest | undefined;
}

export type ReportedStatus = SessionStatus | "expired" | "not_found";

export async function sessionStatus(
  db: Kysely<VerifierDatabase>,
  sessionId: bigint,
  now: Date,
): Promise<ReportedStatus> {
  const row = await db
    .selectFrom("sessions")
    .select(["status", "expires_at"])
    .where("session_id", "=", sessionId.toString())
    .executeTakeFirst();
  if (!row) return "not_found";
  if (row.status === "pending" && row.expires_at.getTime() <= now.getTime()) return "expired";
  return row.status;
}

/**
 * Deletes up to `limit` sessions that expired more than `retentionMs` ago, in one statement; nullifiers are kept for
 * good. SKIP LOCKED: replicas purging at once never wait on each other.
 */
export async function purgeExpiredSessions(
  db: Kysely<VerifierDatabase>,
  now: Date,
  retentionMs: number,
  limit = 5_000,
): Promise<number> {
  const result = await db
    .deleteFrom("sessions")
    .where("session_id", "in", (eb) =>
      eb
        .selectFrom("sessions")
        .select("session_id")
        .where("expires_at", "<", new Date(now.getTime() - retentionMs))
        .limit(limit)
        .forUpdate()
        .skipLocked(),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Test and operations helper: a session stored with a request that was built elsewhere. */
export async function insertSession(
  db: Kysely<VerifierDatabase>,
  sessionId: bigint,
  request: AuthorizationRequest,
  createdAt: Date,
  expiresAt: Date,
): Promise<void> {
  await db
    .insertInto("sessions")
    .values({
      session_id: sessionId.toString(),
      request: JSON.stringify(request),
      status: "pending",
      created_at: createdAt,
      expires_at: expiresAt,
    })
    .execute();
}
