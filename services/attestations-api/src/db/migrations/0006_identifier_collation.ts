import { type Migration, sql } from "@humanpass/db";

/**
 * Identifiers (ids, hex, addresses, DIDs, decimal iden3 IDs) compare byte by byte: `collate "C"`. Under the
 * database's default collation every comparison in an index descent goes through the C library's `strcoll`, even
 * for `C.UTF-8`, while these values are ASCII and only ever matched for equality or used as a tie-break. Their
 * order is unchanged for ASCII text.
 * Changing a column's collation rewrites no rows, but rebuilds the indexes on it.
 */
const IDENTIFIERS: Record<string, string[]> = {
  // The filter columns of migration 0002, written out: a migration never changes, so it reads no other's lists.
  attestations: [
    "id",
    "schema_id",
    "attester_did",
    "attester_iden3_id",
    "attester_address",
    "recipient_did",
    "recipient_iden3_id",
    "recipient_address",
    "tx_hash",
  ],
  schemas: ["id", "tx_hash"],
  revocations: ["attestation_id"],
  nullifiers: ["user_id"],
  list_totals: ["scope"],
  list_attesters: ["scope", "attester_did"],
};

export const identifierCollationMigration: Migration = {
  async up(db) {
    for (const [table, columns] of Object.entries(IDENTIFIERS)) {
      const changes = columns.map((column) => sql`alter column ${sql.ref(column)} type text collate "C"`);
      await sql`alter table ${sql.table(table)} ${sql.join(changes)}`.execute(db);
    }
  },
};
