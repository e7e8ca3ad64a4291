import type { Generated } from "@humanpass/db";
import type { OutboxTables } from "@humanpass/event-bus";

export interface EndpointsTable {
  id: Generated<string>;
  url: string;
  /** Subjects without prefix, e.g. `agent_auth.human_verified`. */
  event_types: string[];
  /** Signing secrets, the newest first; more than one only during a rotation. */
  secrets: string[];
  created_at: Date;
}

export type DeliveryStatus = "pending" | "delivered" | "dead";

/** One event for one endpoint; the key (endpoint, event id) makes every step idempotent. */
export interface DeliveriesTable {
  endpoint_id: string;
  event_id: string;
  subject: string;
  event: unknown;
  status: DeliveryStatus;
  attempts: number;
  /** When the next attempt is due; while an attempt runs, when it is given up as lost (the lease). */
  next_attempt_at: Date;
  /** While an attempt runs: the end of its lease (as `next_attempt_at`); null otherwise. */
  leased_until: Date | null;
  /** Retries stop this long after this time (reset by a replay). */
  retrying_since: Date;
  last_error: string | null;
  delivered_at: Date | null;
}

export interface WebhooksDb extends OutboxTables {
  endpoints: EndpointsTable;
  deliveries: DeliveriesTable;
}

export const SCHEMA = "webhooks";
