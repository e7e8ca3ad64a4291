import { connectTestNats, deleteTestStreams, testTopology } from "@humanpass/testing";
import { jetstreamManager } from "@nats-io/jetstream";
import { type NatsConnection, headers as natsHeaders } from "@nats-io/transport-node";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ensureStreams, streamName, subjectOf } from "../src/index.ts";
import { JetStreamBatchPublisher } from "../src/jetstream-publisher.ts";

const topology = testTopology();
let nc: NatsConnection;
let publisher: JetStreamBatchPublisher;

beforeAll(async () => {
  nc = await connectTestNats();
  await ensureStreams(await jetstreamManager(nc), topology, ["AGENT_AUTH"]);
  publisher = new JetStreamBatchPublisher(nc, 2_000);
});

afterAll(async () => {
  publisher.close();
  await deleteTestStreams(nc, topology);
  await nc.close();
});

function message(subject: string, id: string, body: unknown) {
  const headers = natsHeaders();
  headers.set("Nats-Msg-Id", id);
  return { subject, data: JSON.stringify(body), headers };
}

async function storedIds(): Promise<string[]> {
  const jsm = await jetstreamManager(nc);
  const name = streamName(topology, "AGENT_AUTH");
  const { state } = await jsm.streams.info(name);
  const ids: string[] = [];
  for (let seq = state.first_seq; state.messages > 0 && seq <= state.last_seq; seq++) {
    const m = await jsm.streams.getMessage(name, { seq });
    if (m) ids.push(m.header.get("Nats-Msg-Id"));
  }
  return ids;
}

const subject = subjectOf(topology, "AGENT_AUTH", "human_not_registered");

it("stores a batch in order and resolves once JetStream has acknowledged every message", async () => {
  const before = (await storedIds()).length;
  await publisher.publish(Array.from({ length: 300 }, (_, i) => message(subject, `order-${i}`, { i })));
  const ids = (await storedIds()).slice(before);
  expect(ids).toEqual(Array.from({ length: 300 }, (_, i) => `order-${i}`));
});

it("stores a message once when its batch is published again (a relay crash between PubAck and mark)", async () => {
  const batch = [message(subject, "again-1", { n: 1 }), message(subject, "again-2", { n: 2 })];
  const before = (await storedIds()).length;
  await publisher.publish(batch);
  await publisher.publish(batch);
  expect((await storedIds()).slice(before)).toEqual(["again-1", "again-2"]);
});

it("fails the batch, naming the subject, when no stream takes one of its messages", async () => {
  const stray = `${topology.prefix}.nowhere.event`;
  await expect(
    publisher.publish([message(subject, "before-stray", {}), message(stray, "stray", {})]),
  ).rejects.toThrow(`JetStream did not store ${stray}: 503`);
  await publisher.publish([message(subject, "after-stray", {})]);
  expect((await storedIds()).slice(-2)).toEqual(["before-stray", "after-stray"]);
});

it("keeps batches in flight at once apart", async () => {
  const before = (await storedIds()).length;
  await Promise.all(
    [0, 1, 2].map((b) =>
      publisher.publish(Array.from({ length: 50 }, (_, i) => message(subject, `b${b}-${i}`, { b, i }))),
    ),
  );
  const ids = (await storedIds()).slice(before);
  expect(ids).toHaveLength(150);
  expect(new Set(ids).size).toBe(150);
});

it("refuses to publish once closed", async () => {
  const closed = new JetStreamBatchPublisher(nc, 2_000);
  closed.close();
  await expect(closed.publish([message(subject, "closed", {})])).rejects.toThrow("publisher closed");
});
