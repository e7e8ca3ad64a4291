import { outboxMigration } from "@humanpass/events";

export const outbox = outboxMigration;
