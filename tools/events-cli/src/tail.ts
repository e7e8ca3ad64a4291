import { STREAMS, type StreamName, streamName, streamSubjects } from "@humanpass/event-bus";
import { type ConsumerMessages, DeliverPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { natsCredentials, type TailOptions } from "./args.ts";
import { formatJson, formatPretty, type ReceivedEvent } from "./format.ts";
import { type ConsumerPlan, planConsumers, type StreamSubjects } from "./subjects.ts";

export interface TailIo {
  out: (line: string) => void;
  /** Progress and warnings, kept off stdout so `--json` output stays machine-readable. */
  err: (line: string) => void;
  color: boolean;
}

/** The humanpass streams of the topology that exist on the server, with their subjects. */
async function humanpassStreams(nc: NatsConnection, prefix: string, io: TailIo): Promise<StreamSubjects[]> {
  const jsm = await jetstreamManager(nc);
  const found: StreamSubjects[] = [];
  for (const key of Object.keys(STREAMS) as StreamName[]) {
    const name = streamName({ prefix }, key);
    try {
      const info = await jsm.streams.info(name);
      found.push({ stream: name, subjects: info.config.subjects ?? [streamSubjects({ prefix }, key)] });
    } catch {
      io.err(`stream ${name} does not exist (yet): its events are not followed`);
    }
  }
  return found;
}

/**
 * Follows the chosen subjects with ephemeral ordered consumers (in memory, no acks, deleted by the server
 * when idle) and prints every event; resolves when `count` events were printed or `signal` aborts.
 */
export async function tail(options: TailOptions, io: TailIo, signal?: AbortSignal): Promise<number> {
  const nc = await connect({
    servers: options.servers.split(","),
    name: "humanpass-events-tail",
    ...(options.credentials ?? natsCredentials()),
  });
  const iterators: ConsumerMessages[] = [];
  let printed = 0;
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => {
    finish = resolve;
  });
  signal?.addEventListener("abort", () => finish(), { once: true });
  try {
    const streams = await humanpassStreams(nc, options.prefix, io);
    const requested = options.subjects.map((s) =>
      options.prefix && !s.startsWith(`${options.prefix}.`) ? `${options.prefix}.${s}` : s,
    );
    const plans = planConsumers(streams, requested);
    if (plans.length === 0) {
      io.err(`no humanpass stream carries ${requested.join(", ") || "any subject"}`);
      return 2;
    }
    const js = jetstream(nc);
    for (const plan of plans) {
      const consumer = await js.consumers.get(plan.stream, {
        ...(plan.filter ? { filter_subjects: plan.filter } : {}),
        ...(options.since
          ? { opt_start_time: options.since.toISOString() }
          : { deliver_policy: DeliverPolicy.New }),
      });
      const messages = await consumer.consume();
      iterators.push(messages);
      void pump(plan, messages);
    }
    io.err(
      `following ${plans.map((p) => `${p.filter ?? `${p.stream} (all)`}`).join(", ")}${options.since ? ` since ${options.since.toISOString()}` : ""}`,
    );
    await finished;
    return 0;
  } finally {
    await Promise.all(iterators.map((m) => m.close().catch(() => {})));
    await nc.close();
  }

  async function pump(plan: ConsumerPlan, messages: ConsumerMessages): Promise<void> {
    for await (const msg of messages) {
      if (options.count !== undefined && printed >= options.count) break;
      let event: unknown;
      try {
        event = msg.json();
      } catch {
        event = msg.string();
      }
      const received: ReceivedEvent = { stream: plan.stream, seq: msg.seq, subject: msg.subject, event };
      io.out(options.json ? formatJson(received) : formatPretty(received, io.color));
      printed++;
      if (options.count !== undefined && printed >= options.count) finish();
    }
  }
}
