import type { Migration } from "@humanpass/db";
import { outboxMigration } from "@humanpass/events";
import { readModelMigration } from "./0002_read_model";

export const migrations: Record<string, Migration> = {
  "0001_outbox": outboxMigration,
  "0002_read_model": readModelMigration,
};
