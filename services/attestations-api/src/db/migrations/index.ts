import type { Migration } from "@humanpass/db";
import { outboxMigration } from "@humanpass/events";
import { readModelMigration } from "./0002_read_model";
import { eventOrderMigration } from "./0003_event_order";

export const migrations: Record<string, Migration> = {
  "0001_outbox": outboxMigration,
  "0002_read_model": readModelMigration,
  "0003_event_order": eventOrderMigration,
};
