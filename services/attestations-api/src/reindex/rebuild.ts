import { type Kysely, sql } from "@humanpass/db";
import { jetstreamManager, type NatsConnection, streamName, type Topology } from "@humanpass/event-bus";
import { sleep } from "@humanpass/retry";
import type { Logger } from "@humanpass/telemetry";
import { READ_MODEL_TABLES } from "../db/types.ts";
import { DEFAULT_DURABLES, type ReadModelDurables, startReadModelConsumers } from "../events/consumers.ts";

export interface RebuildOptions {
  db: Kysely<any>;
  nats: NatsConnection;
  topology: Topology;
  logger: Logger;
  durables?: ReadModelDurables;
  /** How often progress is checked and logged. */
  pollMs?: number;
  timeoutMs?: number;
}

export interface RebuildResult {
  applied: number;
  deadLettered: number;
}

/**
 * Rebuilds the read model from the streams: deletes the service's durables, empties the read model and its inbox
 * in one transaction, then replays CHAIN and VERIFIER from their first message through fresh durables (same names,
 * so the service carries on from the end when it starts again) until nothing is pending. Run it while the
 * service is stopped (scaled to zero): a running instance's consumers would lose their durables.
 */
export async function rebuildReadModel(options: RebuildOptions): Promise<RebuildResult> {
  const { db, nats, topology, logger } = options;
  const durables = options.durables ?? DEFAULT_DURABLES;
  const jsm = await jetstreamManager(nats);
  const targets = [
    { stream: streamName(topology, "CHAIN"), durable: durables.chain },
    { stream: streamName(topology, "VERIFIER"), durable: durables.verifier },
  ];
  for (const { stream, durable } of targets) {
    await jsm.consumers.delete(stream, durable).catch((e: Error) => {
      if (!/not found/i.test(e.message)) throw e;
    });
  }
  await db.transaction().execute(async (trx) => {
    await sql`truncate ${sql.join(READ_MODEL_TABLES.map((t) => sql.id(t)))}`.execute(trx);
    await sql`update schemas_version set version = version + 1`.execute(trx);
  });
  logger.info({ durables }, "read model emptied; replaying the streams from the start");

  const consumers = await startReadModelConsumers({ db, nats, topology, logger, durables });
  const deadline = Date.now() + (options.timeoutMs ?? 3_600_000);
  try {
    for (;;) {
      const infos = await Promise.all(targets.map((t) => jsm.consumers.info(t.stream, t.durable)));
      const pending = infos.reduce((n, i) => n + i.num_pending + i.num_ack_pending, 0);
      if (pending === 0) break;
      if (Date.now() > deadline)
        throw new Error(`replay not finished in time: ${pending} messages still pending`);
      logger.info({ pending, applied: consumers.reduce((n, c) => n + c.stats.applied, 0) }, "replaying");
      await sleep(options.pollMs ?? 1_000);
    }
  } finally {
    for (const c of consumers) await c.stop();
  }
  const result = {
    applied: consumers.reduce((n, c) => n + c.stats.applied, 0),
    deadLettered: consumers.reduce((n, c) => n + c.stats.deadLettered, 0),
  };
  logger.info(result, "read model rebuilt");
  return result;
}
