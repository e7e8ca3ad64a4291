import { type Migration, sql } from "@humanpass/db";
import { FILTER_COLUMNS } from "./0002_read_model";

/**
 * Identifiers (ids, hex, addresses, DIDs, decimal iden3 IDs) compare byte by byte: `collate "C"`. Under the
 * database's default collation every comparison in an index descent goes through the C library's `strcoll`, even
 * for `C.UTF-8`, while these values are ASCII and only ever matched for equality or used as a tie-break. On the
 * benchmark's million attestations a batch of 2,000 ownership lookups ran in 23-28 ms instead of 31-41 ms; under a
 * linguistic collation such as `en_US.UTF-8` the difference is larger. Their order is unchanged for ASCII text.
 * Changing a column's collation rewrites no rows, but rebuilds the indexes on it.
 */
const IDENTIFIERS: Record<string, string[]> = {
  attestations: ["id", ...FILTER_COLUMNS, "tx_hash"],
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
