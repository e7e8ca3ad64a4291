import type { Migration } from "@humanpass/db";
import {
  disableOutboxNotifyMigration,
  dropInboxMigration,
  outboxMigration,
  purgeIndexesMigration,
} from "@humanpass/event-bus";
import { humanUsageMigration } from "./0002_human_usage.ts";
import { paymentReservationsMigration } from "./0003_payment_reservations.ts";
import { humanProofStoreMigration } from "./0006_human_proof_store.ts";

export const migrations: Record<string, Migration> = {
  "0001_outbox": outboxMigration,
  "0002_human_usage": humanUsageMigration,
  "0003_payment_reservations": paymentReservationsMigration,
  "0004_drop_inbox": dropInboxMigration,
  "0005_purge_indexes": purgeIndexesMigration,
  "0006_human_proof_store": humanProofStoreMigration,
  "0007_disable_outbox_notify": disableOutboxNotifyMigration,
};
