import type { Migration } from "@humanpass/db";
import { outboxMigration, purgeIndexesMigration } from "@humanpass/event-bus";
import { readModelMigration } from "./0002_read_model.ts";
import { eventOrderMigration } from "./0003_event_order.ts";
import { schemasVersionMigration } from "./0004_schemas_version.ts";
import { listTotalsMigration } from "./0005_list_totals.ts";
import { identifierCollationMigration } from "./0006_identifier_collation.ts";

export const migrations: Record<string, Migration> = {
  "0001_outbox": outboxMigration,
  "0002_read_model": readModelMigration,
  "0003_event_order": eventOrderMigration,
  "0004_schemas_version": schemasVersionMigration,
  "0005_list_totals": listTotalsMigration,
  "0006_identifier_collation": identifierCollationMigration,
  "0007_purge_indexes": purgeIndexesMigration,
};
