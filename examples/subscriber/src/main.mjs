import { subscribe } from "@humanpass/events";
import { connect } from "@nats-io/transport-node";
import pg from "pg";
import pino from "pino";
import { readConfig } from "./config.mjs";
import { applyHumanVerified, migrate, recordDeadLetter } from "./store.mjs";

const config = readConfig();
const logger = pino({ level: config.logLevel });
const pool = new pg.Pool({
  connectionString: config.databaseUrl,
  max: 4,
  options: `-c search_path=${config.databaseSchema}`,
});
await migrate(pool, config.databaseSchema);
const nc = await connect(config.nats);

// Both producers of human_verified: agent-auth (claims) and payment-gateway (paid requests by verified humans).
const streams = ["AGENT_AUTH", "PAYMENTS"];
const subscriptions = await Promise.all(
  streams.map((stream) =>
    subscribe(nc, {
      stream,
      type: "human_verified",
      durable: config.durableOf(stream),
      topology: config.topology,
      async handler(event, delivery) {
        const applied = await applyHumanVerified(pool, stream, event);
        logger.debug({ id: event.id, stream, attempt: delivery.attempt, applied }, "human_verified");
      },
      deadLetter: (letter) => recordDeadLetter(pool, letter),
      onError: (error, delivery) => logger.warn({ err: error.message, ...delivery }, "handler failed"),
    }),
  ),
);
logger.info({ streams, durables: streams.map(config.durableOf) }, "subscribed");

let stopping = false;
const stop = async (signal) => {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, "stopping");
  // Events in hand finish and are acked; anything unacked is delivered again to the next run.
  await Promise.all(subscriptions.map((s) => s.stop()));
  await nc.drain();
  await pool.end();
};
process.once("SIGTERM", () => stop("SIGTERM"));
process.once("SIGINT", () => stop("SIGINT"));
