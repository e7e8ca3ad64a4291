import type { Kysely } from "@humanpass/db";
import {
  type AttestationRevokedData,
  type NatsConnection,
  type RunningConsumer,
  startConsumer,
  type Topology,
} from "@humanpass/events";
import type { Logger } from "@humanpass/telemetry";
import type { CachedPoUVerifier } from "../attestations/cached-verifier";

export interface CacheInvalidationOptions {
  db: Kysely<any>;
  nats: NatsConnection;
  topology: Topology;
  verifier: CachedPoUVerifier;
  logger: Logger;
  /** This replica's name: the cache is per process, so each replica reads the revocations itself. */
  instanceId: string;
}

/**
 * Drops cached human lookups once the chain says they no longer hold: the revoked attestation's on
 * `chain.attestation_revoked`, all of them on `chain.blocks_reverted`.
 */
export async function startCacheInvalidation(options: CacheInvalidationOptions): Promise<RunningConsumer[]> {
  const { db, nats, topology, verifier, logger } = options;
  const suffix = options.instanceId.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64);
  const revoked = await startConsumer({
    db,
    nats,
    topology,
    logger,
    stream: "CHAIN",
    type: "attestation_revoked",
    durable: `payment_gateway_cache_revoked_${suffix}`,
    handler: async (event) => {
      const data = event.data as AttestationRevokedData;
      verifier.revoke(data.attestationId, data.recipientDid);
    },
  });
  const reverted = await startConsumer({
    db,
    nats,
    topology,
    logger,
    stream: "CHAIN",
    type: "blocks_reverted",
    durable: `payment_gateway_cache_reverted_${suffix}`,
    handler: async () => {
      verifier.clear();
      logger.info("chain reorg: every cached human lookup dropped");
    },
  });
  return [revoked, reverted];
}
