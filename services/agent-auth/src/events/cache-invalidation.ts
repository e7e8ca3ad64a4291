import {
  type ChainInvalidationConsumersOptions,
  type ChainInvalidationListenerOptions,
  type InvalidationListener,
  listenForChainInvalidations,
  type RunningConsumer,
  startChainInvalidationConsumers,
} from "@humanpass/events";
import type { ResolutionCache } from "../attestations/resolution-cache";

export type { InvalidationListener };

/** The NOTIFY channel, and the prefix of the two durables, that carry revocations to every replica's cache. */
export const INVALIDATION_CHANNEL = "agent_auth_cache";

/** `chain.attestation_revoked` → drop that attestation's entries; `chain.blocks_reverted` → drop everything. */
export function startCacheInvalidation(
  options: Omit<ChainInvalidationConsumersOptions, "channel">,
): Promise<RunningConsumer[]> {
  return startChainInvalidationConsumers({ ...options, channel: INVALIDATION_CHANNEL });
}

/** Applies the invalidations to this replica's resolution cache. */
export function listenForInvalidations(
  options: Omit<ChainInvalidationListenerOptions, "channel" | "apply" | "applicationName"> & {
    cache: ResolutionCache;
  },
): Promise<InvalidationListener> {
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
