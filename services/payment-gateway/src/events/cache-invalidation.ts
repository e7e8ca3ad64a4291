import type { Kysely } from "@humanpass/db";
import {
  type InvalidationListener,
  listenForChainInvalidations,
  type NatsConnection,
  type RunningConsumer,
  startChainInvalidationConsumers,
  type Topology,
} from "@humanpass/events";
import type { Logger } from "@humanpass/telemetry";
import type { CachedPoUVerifier } from "../attestations/cached-verifier";

/** The NOTIFY channel, and the prefix of the two durables, that carry revocations to every replica's cache. */
export const INVALIDATION_CHANNEL = "payment_gateway_cache";

/**
 * Drops cached human lookups once the chain says they no longer hold: the revoked attestation's on
 * `chain.attestation_revoked`, all of them on `chain.blocks_reverted`. One pair of durables for all replicas.
 */
export function startCacheInvalidation(options: {
  db: Kysely<any>;
  nats: NatsConnection;
  topology: Topology;
  logger: Logger;
}): Promise<RunningConsumer[]> {
  return startChainInvalidationConsumers({ ...options, channel: INVALIDATION_CHANNEL });
}

/** Applies the invalidations to this replica's cached verifier. */
export function listenForInvalidations(options: {
  connectionString: string;
  verifier: CachedPoUVerifier;
  logger: Logger;
  reconnectDelayMs?: number;
}): Promise<InvalidationListener> {
  const { verifier, ...rest } = options;
  return listenForChainInvalidations({
    ...rest,
    channel: INVALIDATION_CHANNEL,
    applicationName: "payment-gateway cache",
    apply: (invalidation) => {
      if ("revoked" in invalidation)
        verifier.revoke(invalidation.revoked.attestationId, invalidation.revoked.recipientDid);
      else verifier.clear();
    },
  });
}
