import type { NatsConnection } from "@nats-io/transport-node";
import { type Kysely, sql } from "kysely";
import pg from "pg";
import type { Logger } from "pino";
import type { AttestationRevokedData } from "./catalog";
import { type RunningConsumer, startConsumer } from "./consumer";
import type { Topology } from "./topology";

/** What a replica's cache of chain-derived lookups must drop: one revoked attestation's entries, or all of them. */
export type ChainInvalidation =
  | { revoked: Pick<AttestationRevokedData, "attestationId" | "recipientDid" | "recipientIden3Id"> }
  | { clear: true };

/**
 * Every replica of a service keeps its own cache, but a durable consumer hands each event to one replica only. So
 * one durable per service (exactly once through the inbox) turns `chain.attestation_revoked` and
 * `chain.blocks_reverted` into a Postgres NOTIFY on `channel` in its transaction, and every replica LISTENs
 * (`listenForChainInvalidations`) and applies it to its own cache. `channel` also names the durables.
 */
export interface ChainInvalidationConsumersOptions {
  db: Kysely<any>;
  nats: NatsConnection;
  topology: Topology;
  logger: Logger;
  channel: string;
}

export async function startChainInvalidationConsumers(
  options: ChainInvalidationConsumersOptions,
): Promise<RunningConsumer[]> {
  const { channel, ...rest } = options;
  const common = { ...rest, stream: "CHAIN" as const };
  const notify = async (trx: Kysely<any>, invalidation: ChainInvalidation) => {
    await sql`select pg_notify(${channel}, ${JSON.stringify(invalidation)})`.execute(trx);
  };
  return Promise.all([
    startConsumer({
      ...common,
      type: "attestation_revoked",
      durable: `${channel}_revoked`,
      handler: async (event, trx) => {
        const { attestationId, recipientDid, recipientIden3Id } = event.data as AttestationRevokedData;
        await notify(trx, { revoked: { attestationId, recipientDid, recipientIden3Id } });
      },
    }),
    startConsumer({
      ...common,
      type: "blocks_reverted",
      durable: `${channel}_reverted`,
      handler: (_event, trx) => notify(trx, { clear: true }),
    }),
  ]);
}

export interface InvalidationListener {
  stop(): Promise<void>;
}

/**
 * Applies the invalidations on `channel` to this replica's cache through `apply`. While the LISTEN connection is
 * down, notifications are lost: `apply({ clear: true })` runs whenever it (re)connects, so nothing missed can
 * survive.
 */
export interface ChainInvalidationListenerOptions {
  connectionString: string;
  channel: string;
  apply: (invalidation: ChainInvalidation) => void;
  logger: Logger;
  /** How the connection shows in pg_stat_activity; the channel when absent. */
  applicationName?: string;
  reconnectDelayMs?: number;
}

export async function listenForChainInvalidations(
  options: ChainInvalidationListenerOptions,
): Promise<InvalidationListener> {
  const { channel, logger } = options;
  // LISTEN takes an identifier, not a parameter.
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`not a plain channel name: ${channel}`);
  const reconnectDelayMs = options.reconnectDelayMs ?? 500;
  const clear = () => options.apply({ clear: true });
  let running = true;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;

  function received(payload: string | undefined) {
    let invalidation: ChainInvalidation;
    try {
      invalidation = JSON.parse(payload ?? "") as ChainInvalidation;
    } catch (e) {
      logger.error(
        { err: (e as Error).message, channel },
        "unreadable cache invalidation; clearing the cache",
      );
      clear();
      return;
    }
    options.apply(invalidation);
  }

  function reconnectLater() {
    clear();
    if (running) retry = setTimeout(() => void connect(), reconnectDelayMs);
  }

  async function connect(): Promise<void> {
    const next = new pg.Client({
      connectionString: options.connectionString,
      application_name: options.applicationName ?? channel,
    });
    next.on("notification", (message) => {
      if (message.channel === channel) received(message.payload);
    });
    const lost = (reason: string) => {
      if (client !== next) return;
      client = undefined;
      logger.warn({ reason, channel }, "cache invalidation LISTEN lost; cache cleared, reconnecting");
      next.end().catch(() => {});
      reconnectLater();
    };
    next.on("error", (e) => lost(e.message));
    next.on("end", () => lost("connection ended"));
    try {
      await next.connect();
      await next.query(`listen ${channel}`);
      client = next;
      // Whatever was notified before this LISTEN took effect is unknown to us.
      clear();
      if (!running) await next.end();
    } catch (e) {
      logger.warn({ err: (e as Error).message, channel }, "cache invalidation LISTEN failed; retrying");
      await next.end().catch(() => {});
      reconnectLater();
    }
  }

  await connect();
  return {
    async stop() {
      running = false;
      clearTimeout(retry);
      const current = client;
      client = undefined;
      await current?.end().catch(() => {});
    },
  };
}
