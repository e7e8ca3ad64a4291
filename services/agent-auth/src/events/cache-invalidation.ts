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
import type { ResolutionCache } from "../attestations/resolution-cache";

export type { InvalidationListener };

/** The NOTIFY channel, and the prefix of the two durables, that carry revocations to every replica's cache. */
export const INVALIDATION_CHANNEL = "agent_auth_cache";

/** `chain.attestation_revoked` → drop that attestation's entries; `chain.blocks_reverted` → drop everything. */
export function startCacheInvalidation(options: {
  db: Kysely<any>;
  nats: NatsConnection;
  topology: Topology;
  logger: Logger;
}): Promise<RunningConsumer[]> {
  return startChainInvalidationConsumers({ ...options, channel: INVALIDATION_CHANNEL });
}

/** Applies the invalidations to this replica's resolution cache. */
export function listenForInvalidations(options: {
  connectionString: string;
  cache: ResolutionCache;
  logger: Logger;
  reconnectDelayMs?: number;
}): Promise<InvalidationListener> {
  const { cache, ...rest } = options;
  return listenForChainInvalidations({
    ...rest,
    channel: INVALIDATION_CHANNEL,
    applicationName: "agent-auth cache",
    apply: (invalidation) => {
      if ("revoked" in invalidation) cache.revoke(invalidation.revoked);
      else cache.clear();
    },
  });
}
