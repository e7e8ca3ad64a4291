/**
 * Stream retention and replicas belong to the topology step (deploy/k8s/base/migrations/topology.mjs), run here as
 * the migration Job runs it, against a 3-node JetStream cluster of this file's own: it reports how streams an older
 * release created (R1, no limits) differ from JETSTREAM_REPLICAS and each stream's JETSTREAM_<STREAM>_MAX_AGE /
 * _MAX_BYTES, DEAD_LETTERS included, and applies them with `--update --confirm` (what an operator runs); what a
 * service calls at start leaves them as the topology step set them.
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { type NatsCluster, REPO_ROOT, startNatsCluster, testTopology } from "@humanpass/testing";
import type { JetStreamManager, StreamConfig } from "@nats-io/jetstream";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  connectNats,
  DEFAULT_RETENTION,
  deadLetterStreamName,
  ensureDeadLetterStream,
  ensureDurable,
  ensureStreams,
  jetstreamManager,
  type NatsConnection,
  RETENTION_TARGETS,
  type RetentionTarget,
  retentionFromEnv,
  STREAMS,
  type StreamName,
  streamName,
  waitForStreams,
} from "../src/index.ts";

const DAY_NS = 86_400_000 * 1_000_000;
const MIB = 1024 ** 2;
const topology = testTopology();
const ALL = Object.keys(STREAMS) as StreamName[];
const nameOf = (target: RetentionTarget) =>
  target === "DEAD_LETTERS" ? deadLetterStreamName(topology) : streamName(topology, target);

let cluster: NatsCluster;
let nats: NatsConnection;
let jsm: JetStreamManager;

/** The migration Job's topology step, as its init container runs it (plain node, environment only). */
async function topologyStep(env: Record<string, string>, args: string[] = []) {
  return promisify(execFile)(
    process.execPath,
    [
      "--conditions=@humanpass/source",
      path.join(REPO_ROOT, "deploy/k8s/base/migrations/topology.mjs"),
      ...args,
    ],
    {
      env: {
        PATH: process.env.PATH ?? "",
        NATS_URL: cluster.servers,
        EVENTS_PREFIX: topology.prefix,
        ...env,
      },
    },
  );
}

async function configs(): Promise<Record<string, StreamConfig>> {
  const out: Record<string, StreamConfig> = {};
  for (const target of RETENTION_TARGETS) out[target] = (await jsm.streams.info(nameOf(target))).config;
  return out;
}

beforeAll(async () => {
  cluster = await startNatsCluster(3);
  nats = await connectNats(cluster.servers, pino({ level: "silent" }), "retention-test");
  jsm = await jetstreamManager(nats);
  // What an earlier release left: every stream at one replica, keeping everything.
  await ensureStreams(jsm, topology, ALL);
  await ensureDeadLetterStream(jsm, topology);
}, 120_000);

afterAll(async () => {
  await nats?.close();
  await cluster?.stop();
});

describe("the topology step", () => {
  it("moves every stream, DEAD_LETTERS included, to JETSTREAM_REPLICAS and the configured retention", async () => {
    const before = await configs();
    expect(Object.values(before).map((c) => [c.num_replicas, c.max_age, c.max_bytes])).toEqual(
      RETENTION_TARGETS.map(() => [1, 0, -1]),
    );
    const env = {
      JETSTREAM_REPLICAS: "3",
      JETSTREAM_CHAIN_MAX_AGE: "7d",
      JETSTREAM_CHAIN_MAX_BYTES: "64MiB",
      JETSTREAM_DEAD_LETTERS_MAX_AGE: "14d",
    };
    // As the migration Job runs it: existing streams are reported, not changed.
    const reported = await topologyStep(env);
    for (const target of RETENTION_TARGETS)
      expect(reported.stdout).toContain(`${nameOf(target)} differs from the topology, not changed: `);
    expect(await configs()).toEqual(before);
    const { stdout } = await topologyStep(env, ["--update", "--confirm"]);
    expect(stdout).toContain(`streams and durables applied: ${RETENTION_TARGETS.map(nameOf).join(", ")}`);
    const after = await configs();
    for (const target of RETENTION_TARGETS) {
      const expected =
        target === "CHAIN"
          ? { max_age: 7 * DAY_NS, max_bytes: 64 * MIB }
          : target === "DEAD_LETTERS"
            ? { max_age: 14 * DAY_NS, max_bytes: DEFAULT_RETENTION.DEAD_LETTERS.maxBytes }
            : {
                max_age: DEFAULT_RETENTION[target].maxAgeMs * 1_000_000,
                max_bytes: DEFAULT_RETENTION[target].maxBytes,
              };
      expect({ stream: target, ...pick(after[target]!) }).toEqual({
        stream: target,
        num_replicas: 3,
        // A full event stream refuses new events; dead letters drop their oldest (docs/architecture.md).
        discard: target === "DEAD_LETTERS" ? "old" : "new",
        ...expected,
      });
    }
  });

  it("is what changes a stream: a service's start leaves replicas and retention as the step set them", async () => {
    const applied = await configs();
    // Everything a service does with the streams when it starts: wait for them, then per consumer make sure of
    // the dead-letter stream and create (or update) its durable.
    await waitForStreams(
      jsm,
      ALL.map((s) => streamName(topology, s)),
      { logger: pino({ level: "silent" }) },
    );
    for (const stream of ALL) {
      await ensureDeadLetterStream(jsm, topology);
      await ensureDurable(jsm, topology, { stream, durable: `svc_${stream.toLowerCase()}` });
    }
    expect(await configs()).toEqual(applied);
  });

  it("applies an operator's change with --update --confirm, and the change stays when the step runs again", async () => {
    const env = {
      JETSTREAM_REPLICAS: "3",
      JETSTREAM_VERIFIER_MAX_AGE: "90d",
      JETSTREAM_VERIFIER_MAX_BYTES: "2GiB",
    };
    await topologyStep(env, ["--update", "--confirm"]);
    const changed = (await configs()).VERIFIER!;
    expect(pick(changed)).toEqual({
      num_replicas: 3,
      discard: "new",
      max_age: 90 * DAY_NS,
      max_bytes: 2 * 1024 * MIB,
    });
    await topologyStep(env, ["--update", "--confirm"]);
    expect((await configs()).VERIFIER).toEqual(changed);
  });

  it("refuses a malformed value, naming the variable, and changes nothing", async () => {
    const before = await configs();
    const failed = await topologyStep({ JETSTREAM_PAYMENTS_MAX_AGE: "a week" }).then(
      () => undefined,
      (e: { code: number; stderr: string }) => e,
    );
    expect(failed?.code).toBe(78);
    expect(failed?.stderr).toContain(
      'JETSTREAM_PAYMENTS_MAX_AGE: "a week" is not a duration (e.g. 30d, 12h, 90m, 3600s; 0 for no age limit)',
    );
    expect(await configs()).toEqual(before);
  });
});

describe("retentionFromEnv", () => {
  it("reads durations and sizes with their units, 0 and -1 for no limit, defaults elsewhere", () => {
    const retention = retentionFromEnv({
      JETSTREAM_CHAIN_MAX_AGE: "0",
      JETSTREAM_CHAIN_MAX_BYTES: "-1",
      JETSTREAM_AGENT_AUTH_MAX_AGE: "36h",
      JETSTREAM_AGENT_AUTH_MAX_BYTES: "1048576",
    });
    expect(retention.CHAIN).toEqual({ maxAgeMs: 0, maxBytes: -1 });
    expect(retention.AGENT_AUTH).toEqual({ maxAgeMs: 36 * 3_600_000, maxBytes: MIB });
    expect(retention.PAYMENTS).toEqual(DEFAULT_RETENTION.PAYMENTS);
    expect(() => retentionFromEnv({ JETSTREAM_CHAIN_MAX_BYTES: "1GB" })).toThrow(
      'JETSTREAM_CHAIN_MAX_BYTES: "1GB" is not a size (e.g. 1GiB, 512MiB, 1048576; -1 for no size limit)',
    );
  });
});

function pick(c: StreamConfig) {
  return { num_replicas: c.num_replicas, discard: c.discard, max_age: c.max_age, max_bytes: c.max_bytes };
}
