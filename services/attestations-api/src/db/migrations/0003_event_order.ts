import { type Migration, sql } from "@humanpass/db";

/**
 * The id (UUIDv7, so time-ordered) of the event that wrote each row, and the reverts seen: a blocks_reverted then
 * drops only what was written before it, and a record emitted before a revert but applied after it is not
 * written at all. Applying the CHAIN events out of order (a redelivery after a failure, several replicas
 * sharing the durable) cannot bring orphaned records back or drop re-indexed ones.
 */
export const eventOrderMigration: Migration = {
  async up(db) {
    for (const table of ["schemas", "attestations", "revocations"]) {
      await sql`alter table ${sql.id(table)} add column event_id text collate "C" not null default ''`.execute(
        db,
      );
    }
    await sql`create table reverts (
      chain_id integer not null,
      from_block bigint not null,
      event_id text collate "C" not null,
      primary key (chain_id, event_id)
    )`.execute(db);
  },
};
