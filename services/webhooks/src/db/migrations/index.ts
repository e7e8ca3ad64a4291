import type { Migration } from "@humanpass/db";
import { outboxMigration, purgeIndexesMigration } from "@humanpass/event-bus";
import { endpointsAndDeliveries } from "./0002_endpoints_and_deliveries.ts";

export const migrations: Record<string, Migration> = {
  "0001_outbox": outboxMigration,
  "0002_endpoints_and_deliveries": endpointsAndDeliveries,
  "0003_purge_indexes": purgeIndexesMigration,
};
