import {
  type AttestationRevokedData,
  assertValidEvent,
  type CloudEvent,
  streamName,
  subjectOf,
  type Topology,
} from "@humanpass/events";
import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { createNoopMeter, type Meter } from "@opentelemetry/api";
import type { Logger } from "pino";
import { observeAnswered } from "./jetstream-metrics.ts";

/** What one revocation unpairs: the attestation and its recipient. */
export type ChainRevocation = Pick<
  AttestationRevokedData,
  "attestationId" | "recipientDid" | "recipientIden3Id"
>;

/** A replica's cache of lookups derived from the chain. */
export interface ChainDerivedCache {
  /** Drops what rests on the revoked attestation (`chain.attestation_revoked`). */
  invalidate(revocation: ChainRevocation): void;
  /** Drops everything (`chain.blocks_reverted`, or when events may have been missed). */
  clear(): void;
}

export interface ChainInvalidationOptions {
  nats: NatsConnection;
  topology: Topology;
  logger: Logger;
  cache: ChainDerivedCache;
  /**
   * Where the follower's series go: the events it received and their lag (`humanpass_cache_invalidation_*`, by
   * type), and how many of each type the CHAIN stream holds, so a follower that hears nothing while the stream
   * grows shows as stalled (HumanpassCacheInvalidationStalled).
   */
  meter?: Meter;
}

export interface ChainInvalidations {
  stop(): Promise<void>;
}

/** The CHAIN event types a replica's cache follows (and all its NATS user may subscribe to, permissions.ts). */
export const CHAIN_INVALIDATION_TYPES = ["attestation_revoked", "blocks_reverted"] as const;
// What says this replica may have missed a message: its connection was lost, or the server dropped messages for it.
const GAPS = new Set(["disconnect", "reconnect", "slowConsumer", "staleConnection"]);

/**
 * Every replica keeps its own cache, so each follows `chain.attestation_revoked` and `chain.blocks_reverted` with
 * plain NATS subscriptions of its own (JetStream delivers a stream's messages to them too), from the newest message
 * on: no consumer on the server, so the service's NATS user needs no consumer API on CHAIN at all, and cannot reach
 * another's consumer there. Whatever this replica cached before it subscribed, or while its connection was down or
 * the server dropped messages for it, may rest on a revocation it never saw: the cache is cleared when the
 * subscriptions start and on every such gap.
 */
export async function followChainInvalidations(
  options: ChainInvalidationOptions,
): Promise<ChainInvalidations> {
  const { cache, logger, nats } = options;
  const meter = options.meter ?? createNoopMeter();
  const received = meter.createCounter("humanpass_cache_invalidation_events_total", {
    description: "Chain events this replica's cache followed (each replica hears every one)",
  });
  const lag = meter.createHistogram("humanpass_cache_invalidation_lag_seconds", {
    description: "Event time to the cache's invalidation",
    unit: "s",
    advice: { explicitBucketBoundaries: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300] },
  });
  for (const type of CHAIN_INVALIDATION_TYPES) received.add(0, { type });
  const inStream = meter.createObservableGauge("humanpass_cache_invalidation_stream_events", {
    description: "Events of each followed type the CHAIN stream holds (STREAM.INFO with a subject filter)",
  });
  const jsm = await jetstreamManager(nats);
  const stream = streamName(options.topology, "CHAIN");
  inStream.addCallback((result) =>
    observeAnswered(
      CHAIN_INVALIDATION_TYPES.map((type) => {
        const subject = subjectOf(options.topology, "CHAIN", type);
        return jsm.streams
          .info(stream, { subjects_filter: subject })
          .then((info) => () => result.observe(info.state.subjects?.[subject] ?? 0, { type }));
      }),
    ),
  );

  function apply(type: string, event: CloudEvent<any>): void {
    if (event.type !== type) return;
    if (type === "blocks_reverted") {
      cache.clear();
      return;
    }
    const { attestationId, recipientDid, recipientIden3Id } = event.data as AttestationRevokedData;
    cache.invalidate({ attestationId, recipientDid, recipientIden3Id });
  }

  const subscriptions = CHAIN_INVALIDATION_TYPES.map((type) =>
    nats.subscribe(subjectOf(options.topology, "CHAIN", type), {
      callback: (error, msg) => {
        if (error) {
          logger.error({ type, err: error.message }, "chain invalidation subscription failed; cache cleared");
          cache.clear();
          return;
        }
        try {
          const event = msg.json<unknown>();
          assertValidEvent("CHAIN", event);
          apply(type, event);
          received.add(1, { type });
          lag.record(Math.max(0, (Date.now() - Date.parse(event.time)) / 1000), { type });
        } catch (e) {
          logger.error({ type, err: (e as Error).message }, "unreadable chain event; cache cleared");
          cache.clear();
        }
      },
    }),
  );
  // The server has the subscriptions once the flush returns: a revocation published afterwards is seen. One it
  // refused (a NATS user without the permission) is closed by then: serving from a cache nothing invalidates would
  // be worse than not starting.
  await nats.flush();
  const refused = subscriptions.filter((sub) => sub.isClosed());
  if (refused.length > 0) {
    for (const sub of subscriptions) sub.unsubscribe();
    throw new Error(
      `the NATS server refused the subscriptions to ${refused.map((sub) => sub.getSubject()).join(", ")} (the user's permissions, users.conf)`,
    );
  }
  cache.clear();

  let running = true;
  void (async () => {
    for await (const status of nats.status()) {
      if (!running) break;
      if (GAPS.has(status.type)) {
        logger.warn({ status: status.type }, "chain invalidations may have a gap; cache cleared");
        cache.clear();
      }
    }
  })().catch((e) => logger.error({ err: (e as Error).message }, "chain invalidation status watch ended"));

  return {
    async stop() {
      running = false;
      for (const sub of subscriptions) sub.unsubscribe();
    },
  };
}
