import { type Kysely, sql } from "@humanpass/db";
import {
  type AttestationRevokedData,
  type NatsConnection,
  type RunningConsumer,
  startConsumer,
  type Topology,
} from "@humanpass/events";
import type { Logger } from "@humanpass/telemetry";
import pg from "pg";
import type { ResolutionCache, Revocation } from "../attestations/resolution-cache";

/**
 * Every replica keeps its own cache, but a durable consumer hands each event to one replica only. So the
 * consumer (one durable for all replicas, exactly once through the inbox) turns each event into a Postgres
 * NOTIFY in its transaction, and every replica LISTENs and applies it to its own cache.
 */
export const INVALIDATION_CHANNEL = "agent_auth_cache";

type Invalidation = { revoked: Revocation } | { clear: true };

export interface CacheInvalidationConsumerOptions {
  db: Kysely<any>;
  nats: NatsConnection;
  topology: Topology;
  logger: Logger;
}

/** `chain.attestation_revoked` → drop that attestation's entries; `chain.blocks_reverted` → drop everything. */
export async function startCacheInvalidation(
  options: CacheInvalidationConsumerOptions,
): Promise<RunningConsumer[]> {
  const common = { ...options, stream: "CHAIN" as const };
  const notify = async (trx: Kysely<any>, invalidation: Invalidation) => {
    await sql`select pg_notify(${INVALIDATION_CHANNEL}, ${JSON.stringify(invalidation)})`.execute(trx);
  };
  return Promise.all([
    startConsumer({
      ...common,
      type: "attestation_revoked",
      durable: "agent_auth_cache_revoked",
      handler: async (event, trx) => {
        const { attestationId, recipientDid, recipientIden3Id } = event.data as AttestationRevokedData;
        await notify(trx, { revoked: { attestationId, recipientDid, recipientIden3Id } });
      },
    }),
    startConsumer({
      ...common,
      type: "blocks_reverted",
      durable: "agent_auth_cache_reverted",
      handler: (_event, trx) => notify(trx, { clear: true }),
    }),
  ]);
}

export interface InvalidationListener {
  stop(): Promise<void>;
}

/**
 * Applies the invalidations to this replica's cache. While the LISTEN connection is down, notifications are
 * lost: the cache is cleared whenever it (re)connects, so nothing missed can survive.
 */
export async function listenForInvalidations(options: {
  connectionString: string;
  cache: ResolutionCache;
  logger: Logger;
  reconnectDelayMs?: number;
}): Promise<InvalidationListener> {
  const { cache, logger } = options;
  const reconnectDelayMs = options.reconnectDelayMs ?? 500;
  let running = true;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;

  function apply(payload: string | undefined) {
    try {
      const invalidation = JSON.parse(payload ?? "") as Invalidation;
      if ("revoked" in invalidation) cache.revoke(invalidation.revoked);
      else cache.clear();
    } catch (e) {
      logger.error({ err: (e as Error).message }, "unreadable cache invalidation; clearing the cache");
      cache.clear();
    }
  }

  function reconnectLater() {
    cache.clear();
    if (running) retry = setTimeout(() => void connect(), reconnectDelayMs);
  }

  async function connect(): Promise<void> {
    const next = new pg.Client({
      connectionString: options.connectionString,
      application_name: "agent-auth cache",
    });
    next.on("notification", (message) => {
      if (message.channel === INVALIDATION_CHANNEL) apply(message.payload);
    });
    const lost = (reason: string) => {
      if (client !== next) return;
      client = undefined;
      logger.warn({ reason }, "cache invalidation LISTEN lost; cache cleared, reconnecting");
      next.end().catch(() => {});
      reconnectLater();
    };
    next.on("error", (e) => lost(e.message));
    next.on("end", () => lost("connection ended"));
    try {
      await next.connect();
      await next.query(`listen ${INVALIDATION_CHANNEL}`);
      client = next;
      // Whatever was notified before this LISTEN took effect is unknown to us.
      cache.clear();
      if (!running) await next.end();
    } catch (e) {
      logger.warn({ err: (e as Error).message }, "cache invalidation LISTEN failed; retrying");
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
