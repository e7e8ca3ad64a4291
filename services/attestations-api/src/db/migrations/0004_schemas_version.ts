import { type Migration, sql } from "@humanpass/db";

/**
 * A counter that every transaction changing `schemas` raises: the API keeps the schemas in memory and reads the
 * counter in the same statement as a page, so it knows, in that statement's snapshot, whether its copy is current.
 */
export const schemasVersionMigration: Migration = {
  async up(db) {
    await sql`create table schemas_version (
      singleton boolean primary key default true check (singleton),
      version bigint not null
    )`.execute(db);
    await sql`insert into schemas_version (version) values (0)`.execute(db);
  },
};
