import {
  type AttestationRevokedData,
  assertValidEvent,
  type CloudEvent,
  streamName,
  subjectOf,
  type Topology,
} from "@humanpass/events";
import { type Consumer, type ConsumerMessages, DeliverPolicy, jetstream } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";
import { sleep } from "./sleep.ts";

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
  /** Wait before the consumer is created again after it failed. Default 1000. */
  restartDelayMs?: number;
}

export interface ChainInvalidations {
  stop(): Promise<void>;
}

// What an ordered consumer reports when it missed or may miss messages; it then recreates itself, though after a
// deleted consumer only once heartbeats are missed (30 s): that one is replaced at once.
const GAPS = new Set(["reset", "ordered_consumer_recreated", "heartbeats_missed"]);

/**
 * Every replica keeps its own cache, so each follows `chain.attestation_revoked` and `chain.blocks_reverted` on
 * its own ordered consumer of stream CHAIN (an ephemeral consumer in memory, nothing acked, no state in the
 * database), from the newest message on. Whatever this replica cached before the consumer existed, or while it
 * had a gap, may rest on a revocation it never saw: the cache is cleared when the consumer is (re)created and
 * whenever it reports a gap. Ordered consumers take one filter subject on NATS 2.9, so there is one per type.
 */
export async function followChainInvalidations(
  options: ChainInvalidationOptions,
): Promise<ChainInvalidations> {
  const { cache, logger } = options;
  const restartDelayMs = options.restartDelayMs ?? 1_000;
  const js = jetstream(options.nats);
  const stream = streamName(options.topology, "CHAIN");
  let running = true;
  const stopped = new AbortController();

  function apply(type: string, event: CloudEvent<any>): void {
    if (event.type !== type) return;
    if (type === "blocks_reverted") {
      cache.clear();
      return;
    }
    const { attestationId, recipientDid, recipientIden3Id } = event.data as AttestationRevokedData;
    cache.invalidate({ attestationId, recipientDid, recipientIden3Id });
  }

  type Following = { consumer: Consumer; messages: ConsumerMessages };

  async function open(type: string): Promise<Following> {
    const consumer = await js.consumers.get(stream, {
      filter_subjects: subjectOf(options.topology, "CHAIN", type),
      deliver_policy: DeliverPolicy.New,
    });
    const messages = await consumer.consume();
    cache.clear();
    void (async () => {
      for await (const status of messages.status()) {
        if (status.type === "consumer_deleted") {
          logger.warn({ type }, "chain invalidation consumer deleted by the server; replacing it");
          await messages.close();
        } else if (GAPS.has(status.type)) {
          logger.warn({ type, status: status.type }, "chain invalidations may have a gap; cache cleared");
          cache.clear();
        }
      }
    })();
    return { consumer, messages };
  }

  // The server would drop an ordered consumer only after 5 minutes without a pull.
  async function close({ consumer, messages }: Following): Promise<void> {
    await messages.close().catch(() => {});
    await consumer.delete().catch(() => {});
  }

  async function follow(type: string, first: Following): Promise<void> {
    let following: Following | undefined = first;
    while (running) {
      try {
        following ??= await open(type);
        current.set(type, following);
        for await (const msg of following.messages) {
          try {
            const event = msg.json<unknown>();
            assertValidEvent("CHAIN", event);
            apply(type, event);
          } catch (e) {
            logger.error(
              { type, seq: msg.seq, err: (e as Error).message },
              "unreadable chain event; cache cleared",
            );
            cache.clear();
          }
        }
      } catch (e) {
        if (running) logger.warn({ type, err: (e as Error).message }, "chain invalidation consumer failed");
      }
      if (following) await close(following);
      following = undefined;
      if (!running) return;
      cache.clear();
      await sleep(restartDelayMs, stopped.signal);
    }
  }

  const current = new Map<string, Following>();
  const types = ["attestation_revoked", "blocks_reverted"];
  // The first consumers are created before this resolves: a revocation published afterwards is seen.
  const firsts = await Promise.all(types.map(open));
  const loops = types.map((type, i) => follow(type, firsts[i]!));
  return {
    async stop() {
      running = false;
      stopped.abort();
      await Promise.all([...current.values()].map(close));
      await Promise.all(loops);
    },
  };
}
