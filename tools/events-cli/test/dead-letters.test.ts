import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import {
  createCloudEvent,
  ensureDeadLetterStream,
  ensureStreams,
  jetstreamManager,
  listDeadLetters,
  publishDeadLetter,
  subjectOf,
} from "@humanpass/event-bus";
import { connectTestNats, deleteTestStreams, REPO_ROOT, testNatsUrl, testTopology } from "@humanpass/testing";
import { jetstream } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const BIN = path.join(REPO_ROOT, "tools/events-cli/bin/humanpass.mjs");
const topology = testTopology();
let nc: NatsConnection;

async function humanpass(...args: string[]) {
  return promisify(execFile)(
    process.execPath,
    [BIN, "events", "dead-letters", ...args, "--prefix", topology.prefix],
    { env: { ...process.env, NATS_URL: testNatsUrl(), EVENTS_PREFIX: "" } },
  );
}

async function deadLetter(consumer: string, n: number) {
  const event = createCloudEvent({
    source: "payment-gateway",
    type: "max_use_exceeded",
    data: { humanId: String(n), maxUse: 1, resource: "http://gw/r" },
  });
  const subject = subjectOf(topology, "PAYMENTS", "max_use_exceeded");
  const payload = JSON.stringify(event);
  const published = await jetstream(nc).publish(subject, payload);
  await publishDeadLetter(nc, topology, {
    consumer,
    stream: "PAYMENTS",
    subject,
    streamSeq: published.seq,
    attempts: 5,
    error: `refused ${n}`,
    deadLetteredAt: new Date().toISOString(),
    payload,
    event,
  });
  return event;
}

beforeAll(async () => {
  nc = await connectTestNats();
  const jsm = await jetstreamManager(nc);
  await ensureStreams(jsm, topology, ["PAYMENTS"]);
  await ensureDeadLetterStream(jsm, topology);
});

afterAll(async () => {
  await deleteTestStreams(nc, topology);
  await nc.close();
});

describe("humanpass events dead-letters", () => {
  it("lists dead letters with their event, error and attempts, and replays them to their subject", async () => {
    const first = await deadLetter("gateway_usage", 1);
    const second = await deadLetter("other", 2);

    const listed = await humanpass("--json");
    const lines = listed.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines).toEqual([
      expect.objectContaining({ consumer: "gateway_usage", attempts: 5, error: "refused 1", event: first }),
      expect.objectContaining({ consumer: "other", attempts: 5, error: "refused 2", event: second }),
    ]);
    const pretty = await humanpass("--consumer", "other");
    expect(pretty.stdout).toContain(second.id);
    expect(pretty.stdout).toContain("refused 2");
    expect(pretty.stdout).not.toContain(first.id);

    const stream = `${topology.prefix.toUpperCase()}_PAYMENTS`;
    const before = (await (await jetstreamManager(nc)).streams.info(stream)).state.last_seq;
    const replayed = await humanpass("replay", String(lines[0].seq));
    expect(replayed.stdout).toContain(`replayed #${lines[0].seq}`);
    const again = await (await jetstreamManager(nc)).streams.getMessage(stream, { seq: before + 1 });
    expect(again?.json()).toEqual(first);
    expect((await listDeadLetters(nc, topology)).map((l) => l.consumer)).toEqual(["other"]);

    await expect(humanpass("replay", "999999")).rejects.toMatchObject({
      stderr: expect.stringContaining("no dead letter #999999"),
    });
    await humanpass("replay", "--all");
    expect(await listDeadLetters(nc, topology)).toEqual([]);
  });

  it("refuses to replay a dead letter the owning stream never carried, or whose payload was altered", async () => {
    const real = await deadLetter("gateway_usage", 3);
    const [genuine] = await listDeadLetters(nc, topology);
    const subject = subjectOf(topology, "PAYMENTS", "max_use_exceeded");
    const forged = createCloudEvent({
      source: "payment-gateway",
      type: "max_use_exceeded",
      data: { humanId: "666", maxUse: 1, resource: "http://gw/r" },
    });
    const letter = {
      consumer: "gateway_usage",
      stream: "PAYMENTS" as const,
      subject,
      attempts: 1,
      error: "forged",
      deadLetteredAt: new Date().toISOString(),
      payload: JSON.stringify(forged),
      event: forged,
    };
    // One names a sequence the stream never had, one names the genuine message's sequence with other bytes.
    await publishDeadLetter(nc, topology, { ...letter, streamSeq: 1_000_000 });
    await publishDeadLetter(nc, topology, { ...letter, streamSeq: genuine!.streamSeq });
    const stream = `${topology.prefix.toUpperCase()}_PAYMENTS`;
    const before = (await (await jetstreamManager(nc)).streams.info(stream)).state.last_seq;

    const replay = await humanpass("replay", "--all").then(
      () => undefined,
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
    expect(replay?.code).toBe(1);
    expect(replay?.stderr).toMatch(/not replayed: stream \S+_PAYMENTS holds no message 1000000/);
    expect(replay?.stderr).toMatch(
      /not replayed: message \d+ of stream \S+_PAYMENTS is not the dead-lettered one/,
    );
    expect(replay?.stderr).toContain("1 dead letter(s) replayed, 2 refused and kept");
    // Only the genuine event went out again, and the forged letters are still listed.
    const after = (await (await jetstreamManager(nc)).streams.info(stream)).state.last_seq;
    expect(after).toBe(before + 1);
    const again = await (await jetstreamManager(nc)).streams.getMessage(stream, { seq: after });
    expect(again?.json()).toEqual(real);
    expect((await listDeadLetters(nc, topology)).map((l) => l.error)).toEqual(["forged", "forged"]);
  });

  it("the cluster's runner (deploy/k8s/base/maintenance/dead-letters.mjs, plain node) lists and replays them too", async () => {
    const runner = (...args: string[]) =>
      promisify(execFile)(
        process.execPath,
        [path.join(REPO_ROOT, "deploy/k8s/base/maintenance/dead-letters.mjs"), ...args],
        { env: { PATH: process.env.PATH ?? "", NATS_URL: testNatsUrl(), EVENTS_PREFIX: topology.prefix } },
      );
    const event = await deadLetter("runner", 4);
    const listed = (await runner("--consumer", "runner")).stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(listed).toEqual([expect.objectContaining({ consumer: "runner", error: "refused 4", event })]);
    await expect(runner("replay")).rejects.toMatchObject({ code: 2 });
    const replayed = await runner("replay", String(listed[0].seq));
    expect(replayed.stdout).toContain(`replayed #${listed[0].seq} to ${listed[0].subject}`);
    expect(await listDeadLetters(nc, topology, { consumer: "runner" })).toEqual([]);
  });
});
