import type { Migration } from "@humanpass/db";
import {
  disableOutboxNotifyMigration,
  dropInboxMigration,
  outboxMigration,
  purgeIndexesMigration,
} from "@humanpass/event-bus";
import { noncesAndClaims } from "./0002_nonces_and_claims.ts";
import { usedNoncesMigration } from "./0005_used_nonces.ts";

export const migrations: Record<string, Migration> = {
  "0001_outbox": outboxMigration,
  "0002_nonces_and_claims": noncesAndClaims,
  "0003_drop_inbox": dropInboxMigration,
  "0004_purge_indexes": purgeIndexesMigration,
  "0005_used_nonces": usedNoncesMigration,
  "0006_disable_outbox_notify": disableOutboxNotifyMigration,
};
