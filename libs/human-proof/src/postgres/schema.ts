// Each statement is idempotent. Unqualified names: they land in the connection's `search_path` schema.

/** The table of `PostgresUsedNonceStore` (also `PostgresHumanProofStore`'s): one row per redeemed nonce, until it expires. */
export const USED_NONCES_SQL = `
create table if not exists used_proof_nonces (
  nonce text primary key,
  expires_at timestamptz not null
);
create index if not exists used_proof_nonces_expires_at on used_proof_nonces (expires_at);
`;

/** The tables of `PostgresHumanProofStore`: run it with your own migrations, or let `migrateHumanProofStore` run it. */
export const HUMAN_PROOF_STORE_SQL = `${USED_NONCES_SQL}
create table if not exists human_usage (
  human_id text not null,
  scope text not null,
  count integer not null check (count >= 0),
  updated_at timestamptz not null default now(),
  primary key (human_id, scope)
);
-- The use each proof took, so that its request's failure gives back exactly that use, once.
create table if not exists proof_uses (
  nonce text primary key,
  human_id text not null,
  scope text not null,
  expires_at timestamptz not null
);
create index if not exists proof_uses_expires_at on proof_uses (expires_at);
-- One row per EIP-3009 authorization a paid request runs with (the chain's own key), until its validBefore.
create table if not exists payment_reservations (
  network text not null,
  asset text not null,
  payer text not null,
  nonce text not null,
  expires_at timestamptz not null,
  primary key (network, asset, payer, nonce)
);
alter table payment_reservations add column if not exists claimed_by text;
create index if not exists payment_reservations_expires_at on payment_reservations (expires_at);
`;

/** What the store needs of a connection pool: `pg`'s `Pool` (or `Client`) has it. */
export interface Queryable {
  query<R = Record<string, unknown>>(
    query: string | { name?: string; text: string; values?: unknown[] },
    values?: unknown[],
  ): Promise<{ rows: R[]; rowCount: number | null }>;
}

/**
 * Creates or completes the store's tables, under an advisory lock so that instances starting together do not
 * race. One simple-protocol query: the statements and the lock share one transaction.
 */
export async function migrateHumanProofStore(pool: Queryable): Promise<void> {
  await pool.query(
    `begin; select pg_advisory_xact_lock(hashtext('humanpass.human-proof-store'));${HUMAN_PROOF_STORE_SQL}commit;`,
  );
}
