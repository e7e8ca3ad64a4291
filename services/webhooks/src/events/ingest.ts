import type { Kysely } from "@humanpass/db";
import {
  type NatsConnection,
  type RunningConsumer,
  STREAMS,
  startConsumer,
  type Topology,
  WEBHOOKS_DURABLES,
} from "@humanpass/event-bus";
import type { Clock } from "@humanpass/service";
import type { Logger, Meter } from "@humanpass/telemetry";
import { enqueueDeliveries } from "../db/deliveries.ts";
import type { WebhooksDb } from "../db/schema.ts";

/**
 * One durable per stream turns each event into a pending delivery for every endpoint subscribed to its subject,
 * in the transaction that records the event in the inbox: an event is queued once, whatever the redeliveries.
 */
export async function startIngest(options: {
  db: Kysely<WebhooksDb>;
  nats: NatsConnection;
  topology: Topology;
  logger: Logger;
  clock: Clock;
  /** Where the consumers' series go (`humanpass_consumer_*`); none without. */
  meter?: Meter;
}): Promise<RunningConsumer[]> {
  return Promise.all(
    WEBHOOKS_DURABLES.map((durable) =>
      startConsumer({
        db: options.db,
        nats: options.nats,
        topology: options.topology,
        logger: options.logger,
        meter: options.meter,
        ...durable,
        handler: (event, trx) =>
          enqueueDeliveries(
            trx,
            `${STREAMS[durable.stream].domain}.${event.type}`,
            event,
            new Date(options.clock()),
          ),
      }),
    ),
  );
}
