import type { Kysely } from "@humanpass/db";
import {
  type AttestationRevokedData,
  type NatsConnection,
  type RunningConsumer,
  startConsumer,
  type Topology,
} from "@humanpass/events";
import type { Logger } from "@humanpass/telemetry";
import type { ResolutionCache } from "../attestations/resolution-cache";

export interface CacheInvalidationOptions {
  db: Kysely<any>;
  nats: NatsConnection;
  topology: Topology;
  cache: ResolutionCache;
  logger: Logger;
  /** This replica's name: the cache is per process, so each replica needs its own durable consumers. */
  instanceId: string;
}

/** Durable names allow letters, digits, `-` and `_` only. */
export function durableSuffix(instanceId: string): string {
  return instanceId.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64);
}

/**
 * Drops cached lookups as soon as the chain says they no longer hold: the revoked attestation's entries on
 * `chain.attestation_revoked`, everything on `chain.blocks_reverted` (a reorg can remove any pairing).
 */
export async function startCacheInvalidation(options: CacheInvalidationOptions): Promise<RunningConsumer[]> {
  const { db, nats, topology, cache, logger } = options;
  const suffix = durableSuffix(options.instanceId);
  const revoked = await startConsumer({
    db,
    nats,
    topology,
    logger,
    stream: "CHAIN",
    type: "attestation_revoked",
    durable: `agent_auth_cache_revoked_${suffix}`,
    handler: async (event) => {
      const data = event.data as AttestationRevokedData;
      cache.revoke({
        attestationId: data.attestationId,
        recipientDid: data.recipientDid,
        recipientIden3Id: data.recipientIden3Id,
      });
      logger.debug({ attestationId: data.attestationId }, "cached lookups of a revoked attestation dropped");
    },
  });
  const reverted = await startConsumer({
    db,
    nats,
    topology,
    logger,
    stream: "CHAIN",
    type: "blocks_reverted",
    durable: `agent_auth_cache_reverted_${suffix}`,
    handler: async () => {
      cache.clear();
      logger.info("chain reorg: every cached lookup dropped");
    },
  });
  return [revoked, reverted];
}
