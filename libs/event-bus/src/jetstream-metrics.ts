import type { JetStreamManager } from "@nats-io/jetstream";
import type { BatchObservableResult, Meter } from "@opentelemetry/api";

/** A durable whose server-side state a service reports: the stream it reads and its name there. */
export interface ObservedDurable {
  stream: string;
  durable: string;
}

export interface JetStreamObservation {
  /** Streams the service publishes to or reads from (their full names). */
  streams: string[];
  /** The service's durables; read when metrics are collected, so durables started later are included. */
  durables: () => ObservedDurable[];
}

/**
 * What JetStream itself knows, read through the service's own JetStream API when metrics are collected: each
 * stream's messages and bytes against its limits, the account's file store against its limit, and each durable's
 * unread (`num_pending`), delivered-but-unacked (`num_ack_pending`) and ack floor. The server's view, so a consumer
 * loop that hangs without a word shows as a durable whose pending count grows while its ack floor stands still.
 * Every replica of a service reports the same numbers (rules take the max). A request that fails (NATS away) skips
 * that series for the scrape: humanpass_nats_connected says why.
 */
export function observeJetStream(meter: Meter, jsm: JetStreamManager, what: JetStreamObservation): void {
  const gauge = (name: string, description: string) => meter.createObservableGauge(name, { description });
  const streamMessages = gauge("humanpass_jetstream_stream_messages", "Messages the stream holds");
  const streamBytes = gauge("humanpass_jetstream_stream_bytes", "Bytes the stream holds");
  const limitMessages = gauge(
    "humanpass_jetstream_stream_limit_messages",
    "The stream's max_msgs (absent when unlimited)",
  );
  const limitBytes = gauge(
    "humanpass_jetstream_stream_limit_bytes",
    "The stream's max_bytes (absent when unlimited)",
  );
  const storage = gauge("humanpass_jetstream_account_storage_bytes", "File store the account uses");
  const storageLimit = gauge(
    "humanpass_jetstream_account_storage_limit_bytes",
    "The account's file store limit (absent when unlimited)",
  );
  const pending = gauge(
    "humanpass_jetstream_consumer_pending_messages",
    "Messages of the durable's subjects not yet delivered to it (num_pending)",
  );
  const ackPending = gauge(
    "humanpass_jetstream_consumer_ack_pending_messages",
    "Messages delivered to the durable and not yet acked (num_ack_pending)",
  );
  const ackFloor = gauge(
    "humanpass_jetstream_consumer_ack_floor_sequence",
    "Stream sequence below which the durable has acked everything",
  );
  const instruments = [
    streamMessages,
    streamBytes,
    limitMessages,
    limitBytes,
    storage,
    storageLimit,
    pending,
    ackPending,
    ackFloor,
  ];
  meter.addBatchObservableCallback(async (result: BatchObservableResult) => {
    await Promise.all([
      ...what.streams.map(async (name) => {
        const info = await jsm.streams.info(name).catch(() => undefined);
        if (!info) return;
        const attrs = { stream: name };
        result.observe(streamMessages, info.state.messages, attrs);
        result.observe(streamBytes, info.state.bytes, attrs);
        if (info.config.max_msgs > 0) result.observe(limitMessages, info.config.max_msgs, attrs);
        if (info.config.max_bytes > 0) result.observe(limitBytes, info.config.max_bytes, attrs);
      }),
      jsm.getAccountInfo().then(
        (account) => {
          result.observe(storage, account.storage);
          if (account.limits.max_storage > 0) result.observe(storageLimit, account.limits.max_storage);
        },
        () => {},
      ),
      ...what.durables().map(async ({ stream, durable }) => {
        const info = await jsm.consumers.info(stream, durable).catch(() => undefined);
        if (!info) return;
        const attrs = { stream, consumer: durable };
        result.observe(pending, info.num_pending, attrs);
        result.observe(ackPending, info.num_ack_pending, attrs);
        result.observe(ackFloor, info.ack_floor.stream_seq, attrs);
      }),
    ]);
  }, instruments);
}
