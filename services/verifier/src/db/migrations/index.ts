import type { Migration } from "@humanpass/db";
import { outboxMigration } from "@humanpass/events";
import { sessionsAndNullifiers } from "./0001_sessions_and_nullifiers";

export const migrations: Record<string, Migration> = {
  "0000_outbox": outboxMigration,
  "0001_sessions_and_nullifiers": sessionsAndNullifiers,
};
