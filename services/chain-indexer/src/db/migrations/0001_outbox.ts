import { outboxMigration } from "@humanpass/event-bus";

export const outbox = outboxMigration;
