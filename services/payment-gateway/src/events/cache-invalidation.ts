import {
  type ChainInvalidationConsumersOptions,
  type ChainInvalidationListenerOptions,
  type InvalidationListener,
  listenForChainInvalidations,
  type RunningConsumer,
  startChainInvalidationConsumers,
} from "@humanpass/events";
import type { CachedPoUVerifier } from "../attestations/cached-verifier";

/** The NOTIFY channel, and the prefix of the two durables, that carry revocations to every replica's cache. */
export const INVALIDATION_CHANNEL = "payment_gateway_cache";

/**
 * Drops cached human lookups once the chain says they no longer hold: the revoked attestation's on
 * `chain.attestation_revoked`, all of them on `chain.blocks_reverted`. One pair of durables for all replicas.
 */
export function startCacheInvalidation(
  options: Omit<ChainInvalidationConsumersOptions, "channel">,
): Promise<RunningConsumer[]> {
  return startChainInvalidationConsumers({ ...options, channel: INVALIDATION_CHANNEL });
}

/** Applies the invalidations to this replica's cached verifier. */
export function listenForInvalidations(
  options: Omit<ChainInvalidationListenerOptions, "channel" | "apply" | "applicationName"> & {
    verifier: CachedPoUVerifier;
  },
): Promise<InvalidationListener> {
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
