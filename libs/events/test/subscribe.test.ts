import { connectTestNats, eventually, testTopology } from "@humanpass/testing";
import { type JetStreamManager, jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type CloudEvent,
  createCloudEvent,
  type HumanVerifiedData,
  replaySince,
  STREAMS,
  type StreamName,
  type SubscriberDeadLetter,
  type Subscription,
  streamName,
  streamSubjects,
  subjectOf,
  subscribe,
} from "../src/index.ts";

const topology = testTopology();
const deadLetterSubject = `${topology.prefix}.subscriber-acme.dead_letters`;
let nc: NatsConnection;
let jsm: JetStreamManager;
let humans = 0;

beforeAll(async () => {
  nc = await connectTestNats();
  jsm = await jetstreamManager(nc);
  for (const stream of Object.keys(STREAMS) as StreamName[])
    await jsm.streams.add({
      name: streamName(topology, stream),
      subjects: [streamSubjects(topology, stream)],
    });
  await jsm.streams.add({
    name: `${topology.prefix.toUpperCase()}_ACME_DEAD_LETTERS`,
    subjects: [deadLetterSubject],
  });
});

afterAll(async () => {
  for await (const s of jsm.streams.list())
    if (s.config.name.startsWith(`${topology.prefix.toUpperCase()}_`))
      await jsm.streams.delete(s.config.name);
  await nc.close();
});

async function publishHumanVerified(): Promise<CloudEvent<HumanVerifiedData>> {
  const event = createCloudEvent({
    source: "agent-auth",
    type: "human_verified",
    data: {
      humanId: String(++humans),
      verifiedAt: new Date().toISOString(),
      humanDid: `did:iden3:billions:main:h${humans}`,
      resource: "https://api.example.com/weather",
    },
  });
  await publish("AGENT_AUTH", event);
  return event;
}

async function publish(stream: StreamName, event: CloudEvent): Promise<void> {
  await jetstream(nc).publish(subjectOf(topology, stream, event.type), JSON.stringify(event), {
    msgID: event.id,
  });
}

describe("subscribe", () => {
  it("hands each event of its type to the handler once, typed and validated, and resumes where it stopped", async () => {
    const first = [await publishHumanVerified(), await publishHumanVerified()];
    await publish(
      "AGENT_AUTH",
      createCloudEvent({
        source: "agent-auth",
        type: "human_not_registered",
        data: { did: "did:x", resource: "https://api.example.com" },
      }),
    );
    const seen: string[] = [];
    const options = {
      stream: "AGENT_AUTH" as const,
      type: "human_verified" as const,
      durable: "acme_humans",
      topology,
      handler: async (event: CloudEvent<HumanVerifiedData>) => {
        seen.push(`${event.id}:${event.data.humanId}`);
      },
    };
    let subscription: Subscription = await subscribe(nc, options);
    await eventually(() => seen.length === 2);
    await subscription.stop();
    expect(seen).toEqual(first.map((e) => `${e.id}:${e.data.humanId}`));

    const later = [await publishHumanVerified(), await publishHumanVerified()];
    subscription = await subscribe(nc, options);
    await eventually(() => seen.length === 4);
    await subscription.stop();
    expect(seen.slice(2)).toEqual(later.map((e) => `${e.id}:${e.data.humanId}`));
    const info = await jsm.consumers.info(streamName(topology, "AGENT_AUTH"), "acme_humans");
    expect(info.num_pending + info.num_ack_pending).toBe(0);
  });

  it("redelivers after a failure with its back-off, and dead-letters an event the handler keeps refusing without holding up the next", async () => {
    const flaky = await publishHumanVerified();
    const poison = await publishHumanVerified();
    const after = await publishHumanVerified();
    const attempts = new Map<string, number[]>();
    const letters: SubscriberDeadLetter[] = [];
    const applied: string[] = [];
    const subscription = await subscribe(nc, {
      stream: "AGENT_AUTH",
      type: "human_verified",
      durable: "acme_retries",
      topology,
      startAt: new Date(Date.parse(flaky.time)),
      maxDeliveries: 3,
      backoffMs: [50, 100],
      deadLetter: async (letter) => {
        letters.push(letter);
      },
      handler: async (event, delivery) => {
        attempts.set(event.id, [...(attempts.get(event.id) ?? []), delivery.attempt]);
        if (event.id === poison.id) throw new Error("cannot apply");
        if (event.id === flaky.id && delivery.attempt < 3) throw new Error("database busy");
        applied.push(event.id);
      },
    });
    await eventually(() => applied.includes(flaky.id) && applied.includes(after.id) && letters.length === 1);
    await subscription.stop();
    expect(applied.filter((id) => id === flaky.id || id === after.id).sort()).toEqual(
      [flaky.id, after.id].sort(),
    );
    expect(attempts.get(flaky.id)).toEqual([1, 2, 3]);
    expect(attempts.get(poison.id)).toEqual([1, 2, 3]);
    expect(letters).toEqual([
      expect.objectContaining({
        durable: "acme_retries",
        stream: "AGENT_AUTH",
        attempts: 3,
        error: "cannot apply",
        payload: JSON.stringify(poison),
      }),
    ]);
  });

  it("dead-letters an invalid event at once to the subscriber's own subject, stored before the event is dropped", async () => {
    const broken = { ...(await publishHumanVerified()), id: "x" };
    const invalid = createCloudEvent({
      source: "agent-auth",
      type: "human_verified",
      data: { humanId: "-1" },
    });
    await publish("AGENT_AUTH", invalid);
    const calls: string[] = [];
    const subscription = await subscribe(nc, {
      stream: "AGENT_AUTH",
      type: "human_verified",
      durable: "acme_invalid",
      topology,
      startAt: new Date(Date.parse(broken.time) - 1),
      deadLetter: { subject: deadLetterSubject },
      handler: async (event) => {
        calls.push(event.id);
      },
    });
    const stored = await eventually(async () => {
      const info = await jsm.streams.info(`${topology.prefix.toUpperCase()}_ACME_DEAD_LETTERS`);
      return info.state.messages === 1;
    });
    await subscription.stop();
    expect(stored).toBe(true);
    const letter = JSON.parse(
      (await jsm.streams.getMessage(`${topology.prefix.toUpperCase()}_ACME_DEAD_LETTERS`, {
        seq: 1,
      }))!.string(),
    ) as SubscriberDeadLetter;
    expect(letter).toMatchObject({ attempts: 1, payload: JSON.stringify(invalid) });
    expect(letter.error).toMatch(/^invalid event: invalid human_verified data/);
    expect(calls).not.toContain(invalid.id);
  });
});

describe("replaySince", () => {
  it("hands over the events stored since a time, in order, then returns, leaving no consumer behind", async () => {
    await publishHumanVerified();
    await new Promise((r) => setTimeout(r, 50));
    const since = new Date();
    await new Promise((r) => setTimeout(r, 50));
    const expected = [
      await publishHumanVerified(),
      await publishHumanVerified(),
      await publishHumanVerified(),
    ];
    const consumersBefore = (await jsm.streams.info(streamName(topology, "AGENT_AUTH"))).state.consumer_count;
    const replayed: string[] = [];
    const count = await replaySince(nc, {
      stream: "AGENT_AUTH",
      type: "human_verified",
      since,
      consumer: "acme_replay",
      topology,
      handler: async (event) => {
        replayed.push(event.id);
      },
    });
    expect(count).toBe(3);
    expect(replayed).toEqual(expected.map((e) => e.id));
    const consumersAfter = (await jsm.streams.info(streamName(topology, "AGENT_AUTH"))).state.consumer_count;
    expect(consumersAfter).toBe(consumersBefore);
  });

  it("returns 0 at once when nothing was stored since that time", async () => {
    const count = await replaySince(nc, {
      stream: "PAYMENTS",
      since: new Date(),
      consumer: "acme_replay",
      topology,
      handler: async () => {
        throw new Error("no event expected");
      },
    });
    expect(count).toBe(0);
  });
});
