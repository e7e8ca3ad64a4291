import type { Generated } from "@humanpass/db";
import type { OutboxTables } from "@humanpass/event-bus";

/** The route that issued a nonce; a nonce is accepted only on its own path. */
export type ClaimPath = "helper" | "direct";

/** A redeemed nonce (`USED_NONCES_SQL` of `@humanpass/human-proof/postgres`), kept until it expires. */
export interface UsedProofNoncesTable {
  nonce: string;
  expires_at: Date;
}

/** Claims made under the one-claim-per-human policy: one row per human. */
export interface HumanClaimsTable {
  human_id: string;
  path: ClaimPath;
  agent_did: string;
  agent_address: string;
  human_did: string;
  claimed_at: Generated<Date>;
}

export interface AgentAuthDb extends OutboxTables {
  used_proof_nonces: UsedProofNoncesTable;
  human_claims: HumanClaimsTable;
}

export const SCHEMA = "agent_auth";
