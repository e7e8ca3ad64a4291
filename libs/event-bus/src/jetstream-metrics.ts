import { setTimeout as delay } from "node:timers/promises";
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
 * How long a scrape waits for the JetStream API: well inside Prometheus's scrape timeout (4 s in
 * deploy/observability/prometheus.yml), so a NATS server that stops answering without closing the connection (paused,
 * partitioned) costs the scrape this much and not the API's own 5 s timeout, which failed the whole scrape and hid
 * every other series of the service (the outbox's age among them) for as long as NATS was away.
 */
const SCRAPE_DEADLINE_MS = 1_000;

/**
 * Runs each read's observation if the read answered by the deadline; a read that fails or answers later is not
 * observed in this scrape (the exporter repeats the last answer, and humanpass_nats_connected says when these numbers
 * are not current).
 */
export async function observeAnswered(
  reads: Array<Promise<(() => void) | undefined>>,
  deadlineMs = SCRAPE_DEADLINE_MS,
): Promise<void> {
  const answered: Array<() => void> = [];
  const all = Promise.all(
    reads.map((read) =>
      read.then(
        (observe) => {
          if (observe) answered.push(observe);
        },
        () => {},
      ),
    ),
  );
  const deadline = new AbortController();
  await Promise.race([all, delay(deadlineMs, undefined, { signal: deadline.signal })]);
  deadline.abort();
  for (const observe of answered.splice(0)) observe();
}

/**
 * What JetStream itself knows, read through the service's own JetStream API when metrics are collected: each
 * stream's messages and bytes against its byte limit, the account's file store, and each durable's unread
 * (`num_pending`), delivered-but-unacked (`num_ack_pending`) and ack floor. The server's view, so a consumer loop that
 * hangs without a word shows as a durable whose pending count grows while its ack floor stands still. Every replica of
 * a service reports the same numbers (rules take the max). Each scrape waits for them at most `deadlineMs`
 * (observeAnswered).
 */
export function observeJetStream(
  meter: Meter,
  jsm: JetStreamManager,
  what: JetStreamObservation,
  deadlineMs = SCRAPE_DEADLINE_MS,
): void {
  const gauge = (name: string, description: string) => meter.createObservableGauge(name, { description });
  const streamMessages = gauge("humanpass_jetstream_stream_messages", "Messages the stream holds");
  const streamBytes = gauge("humanpass_jetstream_stream_bytes", "Bytes the stream holds");
  const limitBytes = gauge(
    "humanpass_jetstream_stream_limit_bytes",
    "The stream's max_bytes (absent when unlimited)",
  );
  const storage = gauge("humanpass_jetstream_account_storage_bytes", "File store the account uses");
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
  const instruments = [streamMessages, streamBytes, limitBytes, storage, pending, ackPending, ackFloor];
  meter.addBatchObservableCallback(
    (result: BatchObservableResult) =>
      observeAnswered(
        [
          ...what.streams.map((name) =>
            jsm.streams.info(name).then((info) => () => {
              const attrs = { stream: name };
              result.observe(streamMessages, info.state.messages, attrs);
              result.observe(streamBytes, info.state.bytes, attrs);
              if (info.config.max_bytes > 0) result.observe(limitBytes, info.config.max_bytes, attrs);
            }),
          ),
          jsm.getAccountInfo().then((account) => () => result.observe(storage, account.storage)),
          ...what.durables().map(({ stream, durable }) =>
            jsm.consumers.info(stream, durable).then((info) => () => {
              const attrs = { stream, consumer: durable };
              result.observe(pending, info.num_pending, attrs);
              result.observe(ackPending, info.num_ack_pending, attrs);
              result.observe(ackFloor, info.ack_floor.stream_seq, attrs);
            }),
          ),
        ],
        deadlineMs,
      ),
    instruments,
  );
}
