import type { Migration } from "@humanpass/db";
import { disableOutboxNotifyMigration, outboxMigration, purgeIndexesMigration } from "@humanpass/event-bus";
import { sessionsAndNullifiers } from "./0001_sessions_and_nullifiers.ts";

export const migrations: Record<string, Migration> = {
  "0000_outbox": outboxMigration,
  "0001_sessions_and_nullifiers": sessionsAndNullifiers,
  "0002_purge_indexes": purgeIndexesMigration,
  "0003_disable_outbox_notify": disableOutboxNotifyMigration,
};
