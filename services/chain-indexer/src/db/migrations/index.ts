import type { Migration } from "@humanpass/db";
import { disableOutboxNotifyMigration, purgeIndexesMigration } from "@humanpass/event-bus";
import { outbox } from "./0001_outbox.ts";
import { cursor } from "./0002_cursor.ts";

export const migrations: Record<string, Migration> = {
  "0001_outbox": outbox,
  "0002_cursor": cursor,
  "0003_purge_indexes": purgeIndexesMigration,
  "0004_disable_outbox_notify": disableOutboxNotifyMigration,
};
