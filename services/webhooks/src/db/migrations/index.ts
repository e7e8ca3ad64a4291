import type { Migration } from "@humanpass/db";
import { disableOutboxNotifyMigration, outboxMigration, purgeIndexesMigration } from "@humanpass/event-bus";
import { endpointsAndDeliveries } from "./0002_endpoints_and_deliveries.ts";
import { attemptsInFlight } from "./0004_attempts_in_flight.ts";

export const migrations: Record<string, Migration> = {
  "0001_outbox": outboxMigration,
  "0002_endpoints_and_deliveries": endpointsAndDeliveries,
  "0003_purge_indexes": purgeIndexesMigration,
  "0004_attempts_in_flight": attemptsInFlight,
  "0005_disable_outbox_notify": disableOutboxNotifyMigration,
};
