import type { OutboxTables } from "@humanpass/event-bus";

export const SCHEMA = "verifier";

export type SessionStatus = "pending" | "success";

export interface SessionsTable {
  /** int8 arrives as a decimal string (see @humanpass/db). */
  session_id: string;
  request: unknown;
  status: SessionStatus;
  created_at: Date;
  expires_at: Date;
  verified_at: Date | null;
}

export interface NullifiersTable {
  nullifier_session_id: string;
  nullifier: string;
  session_id: string;
  user_did: string;
  user_id: string;
  verified_at: Date;
}

export interface VerifierDatabase extends OutboxTables {
  sessions: SessionsTable;
  nullifiers: NullifiersTable;
}
