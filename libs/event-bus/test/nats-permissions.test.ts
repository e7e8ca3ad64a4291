/**
 * The NATS users of the deployments, on a real nats-server of this file's own whose configuration is generated from
 * the same source as deploy/k8s/base/nats/users.conf (libs/event-bus/src/permissions.ts), plus two subscribers as
 * `npx humanpass nats subscriber` prints them. Each allowed call is made and must work; each forbidden one must
 * be refused by the server with a permission error (not a timeout, not a "not found").
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { createMetrics } from "@humanpass/telemetry";
import { REPO_ROOT, sampleValue } from "@humanpass/testing";
import {
  AckPolicy,
  DeliverPolicy,
  type JetStreamManager,
  jetstream,
  jetstreamManager,
} from "@nats-io/jetstream";
import { headers, type NatsConnection } from "@nats-io/transport-node";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  applyTopology,
  connectNats,
  createCloudEvent,
  DEFAULT_TOPOLOGY,
  ensureDurable,
  followChainInvalidations,
  observeJetStream,
  passwordVariable,
  renderUser,
  renderUsersConf,
  replaySince,
  SERVICE_GRANTS,
  STREAMS,
  type StreamName,
  subjectOf,
  subscribe,
  subscriberPermissions,
  subscriberUser,
  waitForStreams,
} from "../src/index.ts";
import { JetStreamBatchPublisher } from "../src/jetstream-publisher.ts";
import { type AuthNatsServer, passwordOf, startAuthNatsServer } from "./nats-server.ts";

const logger = pino({ level: "silent" });
const ALL_STREAMS = Object.keys(STREAMS) as StreamName[];
const SUBSCRIBERS = { acme: ["VERIFIER", "AGENT_AUTH"], beta: ["VERIFIER"] } as const;
const USERS = [
  ...SERVICE_GRANTS.map((g) => g.user),
  "topology",
  "operator",
  ...Object.keys(SUBSCRIBERS).map(subscriberUser),
];

let server: AuthNatsServer;
let operatorJs: ReturnType<typeof jetstream>;

const DENIED = /permissions violation/i;

/** What a call came to: "ok", or the error's message (permission errors name the subject they refused). */
const outcome = (p: Promise<unknown>) =>
  p.then(
    () => "ok",
    (e: Error) => e.message,
  );

function eventFor(stream: StreamName, source: string = STREAMS[stream].source) {
  const type =
    stream === "CHAIN" ? "blocks_reverted" : stream === "VERIFIER" ? "x_test" : "human_not_registered";
  const data =
    stream === "CHAIN"
      ? { chainId: 1, fromBlock: 1, toBlock: 1, attestationIds: [], revokedAttestationIds: [], schemaIds: [] }
      : { did: "did:x", resource: "r" };
  return {
    subject: subjectOf(DEFAULT_TOPOLOGY, stream, type),
    payload: JSON.stringify(createCloudEvent({ source, type, data })),
  };
}

beforeAll(async () => {
  const subscribers = Object.entries(SUBSCRIBERS).map(([name, streams]) =>
    renderUser(
      subscriberUser(name),
      `$${passwordVariable(subscriberUser(name))}`,
      subscriberPermissions({ name, streams: [...streams] }, DEFAULT_TOPOLOGY),
    ),
  );
  server = await startAuthNatsServer(renderUsersConf(DEFAULT_TOPOLOGY, subscribers), USERS);
  const applied = await applyTopology(
    await jetstreamManager(await server.connectAs("topology")),
    DEFAULT_TOPOLOGY,
  );
  expect(applied).toEqual(["VERIFIER", "CHAIN", "AGENT_AUTH", "PAYMENTS", "DEAD_LETTERS"]);
  operatorJs = jetstream(await server.connectAs("operator"));
  for (const stream of ALL_STREAMS) {
    const { subject, payload } = eventFor(stream);
    await operatorJs.publish(subject, payload);
  }
});

afterAll(async () => {
  await server?.stop();
});

describe("users.conf", () => {
  it("is the file generated from libs/event-bus/src/permissions.ts (`npx humanpass nats users-conf`)", () => {
    const committed = readFileSync(path.join(REPO_ROOT, "deploy/k8s/base/nats/users.conf"), "utf8");
    expect(committed).toBe(renderUsersConf(DEFAULT_TOPOLOGY));
  });
});

/** Every stream-changing call a user might try on `stream`. */
async function streamChanges(jsm: JetStreamManager, stream: string): Promise<Record<string, string>> {
  const config = (await operatorJsm()).streams.info(stream).then((i) => i.config);
  return {
    delete: await outcome(jsm.streams.delete(stream)),
    purge: await outcome(jsm.streams.purge(stream)),
    update: await outcome(jsm.streams.update(stream, { ...(await config), max_msgs: 1 })),
    create: await outcome(
      jsm.streams.add({ name: `${stream}_COPY`, subjects: [`copy_${stream.toLowerCase()}.>`] }),
    ),
  };
}

/** One pull request as a consumer's client sends it (the client's own `next()` first asks for the consumer's info). */
const pull = (nc: NatsConnection, stream: string, durable: string) =>
  nc.request(`$JS.API.CONSUMER.MSG.NEXT.${stream}.${durable}`, JSON.stringify({ batch: 1, no_wait: true }));

/** Whether a subscription is refused: closed with the server's error, or "still open" after 5 s (allowed). */
async function subscription(nc: NatsConnection, subject: string): Promise<string> {
  const sub = nc.subscribe(subject);
  const closed = await Promise.race([
    sub.closed.then(
      (e) => (e instanceof Error ? e.message : "closed"),
      (e: Error) => e.message,
    ),
    new Promise<string>((resolve) => setTimeout(() => resolve("still open"), 5_000)),
  ]);
  sub.unsubscribe();
  return closed;
}

let operatorJsmCached: JetStreamManager | undefined;
async function operatorJsm(): Promise<JetStreamManager> {
  operatorJsmCached ??= await jetstreamManager(await server.connectAs("operator"));
  return operatorJsmCached;
}

describe("the topology user", () => {
  it("creates and updates streams (beforeAll applied them) but may not delete or purge one", async () => {
    const jsm = await jetstreamManager(await server.connectAs("topology"));
    for (const stream of [...ALL_STREAMS, "DEAD_LETTERS"]) {
      const deleted = await outcome(jsm.streams.delete(stream));
      const purge = await outcome(jsm.streams.purge(stream));
      expect({ stream, deleted, purge }).toEqual({
        stream,
        deleted: expect.stringMatching(DENIED),
        purge: expect.stringMatching(DENIED),
      });
    }
  });
});

describe("service users", () => {
  it("publish their own stream's events and no other's", async () => {
    for (const grant of SERVICE_GRANTS) {
      const js = jetstream(await server.connectAs(grant.user));
      for (const stream of ALL_STREAMS) {
        // Its own user, its own source: only the subject decides.
        const { subject, payload } = eventFor(stream, grant.user);
        const published = await outcome(js.publish(subject, payload, { timeout: 2_000 }));
        expect({ user: grant.user, subject, published }).toEqual({
          user: grant.user,
          subject,
          published: stream === grant.owns ? "ok" : expect.stringMatching(DENIED),
        });
      }
    }
  });

  it("may not delete, purge, update or create any stream, their own included", async () => {
    for (const grant of SERVICE_GRANTS) {
      const jsm = await jetstreamManager(await server.connectAs(grant.user));
      for (const stream of [...ALL_STREAMS, "DEAD_LETTERS"]) {
        const changes = await streamChanges(jsm, stream);
        expect({ user: grant.user, stream, changes }).toEqual({
          user: grant.user,
          stream,
          changes: {
            delete: expect.stringMatching(DENIED),
            purge: expect.stringMatching(DENIED),
            update: expect.stringMatching(DENIED),
            create: expect.stringMatching(DENIED),
          },
        });
      }
    }
    const state = await Promise.all(
      ALL_STREAMS.map(async (s) => (await (await operatorJsm()).streams.info(s)).state),
    );
    for (const s of state) expect(s.messages).toBeGreaterThan(0);
  });

  it("wait for their streams with STREAM.INFO, and see no other stream", async () => {
    for (const grant of SERVICE_GRANTS) {
      const jsm = await jetstreamManager(await server.connectAs(grant.user));
      const mine = [
        ...new Set([
          ...(grant.owns ? [grant.owns] : []),
          ...grant.durables.map((d) => d.stream),
          ...grant.follows.map((f) => f.stream),
        ]),
      ];
      await waitForStreams(jsm, mine, { logger, timeoutMs: 1 });
      for (const other of ALL_STREAMS.filter((s) => !mine.includes(s)))
        expect(await outcome(jsm.streams.info(other))).toMatch(DENIED);
    }
  });

  it("publish batches from the outbox relay through their own inbox", async () => {
    const nc = await connectNats(server.url, logger, "test", {
      user: "verifier",
      pass: passwordOf("verifier"),
    });
    const publisher = new JetStreamBatchPublisher(nc, 5_000);
    const { subject, payload } = eventFor("VERIFIER");
    const h = headers();
    h.set("Nats-Msg-Id", "batch-1");
    await publisher.publish([{ subject, data: payload, headers: h }]);
    publisher.close();
    await nc.close();
  });

  it("attestations-api reads its durables, acks, stores its dead letters, deletes (reindex) its durables", async () => {
    const nc = await server.connectAs("attestations-api");
    const jsm = await jetstreamManager(nc);
    for (const { stream, durable } of SERVICE_GRANTS.find((g) => g.user === "attestations-api")!.durables) {
      await ensureDurable(jsm, DEFAULT_TOPOLOGY, { stream, durable });
      await ensureDurable(jsm, DEFAULT_TOPOLOGY, { stream, durable, ackWaitMs: 20_000 }); // the update path
      const msg = await (await jetstream(nc).consumers.get(stream, durable)).next({ expires: 2_000 });
      expect(msg?.subject).toBe(eventFor(stream).subject);
      expect(await msg?.ackAck()).toBe(true);
      await jetstream(nc).publish(`dead_letters.${durable}`, "{}", {
        expect: { streamName: "DEAD_LETTERS" },
      });
      await jsm.consumers.delete(stream, durable);
    }
    // A durable of any other name, on a stream it reads or not, and other services' dead letters: refused.
    expect(
      await outcome(jsm.consumers.add("CHAIN", { durable_name: "other", ack_policy: AckPolicy.Explicit })),
    ).toMatch(DENIED);
    expect(
      await outcome(
        jsm.consumers.add("PAYMENTS", {
          durable_name: "attestations-api-chain",
          ack_policy: AckPolicy.Explicit,
        }),
      ),
    ).toMatch(DENIED);
    expect(await outcome(jetstream(nc).publish("dead_letters.other", "{}"))).toMatch(DENIED);
  });

  it("a service without the revocation subjects cannot start following them: no cache left uninvalidated", async () => {
    const nc = await connectNats(server.url, logger, "verifier", {
      user: "verifier",
      pass: passwordOf("verifier"),
    });
    const cache = { invalidate: () => {}, clear: () => {} };
    await expect(
      followChainInvalidations({ nats: nc, topology: DEFAULT_TOPOLOGY, logger, cache }),
    ).rejects.toThrow(/refused the subscriptions to chain\.attestation_revoked, chain\.blocks_reverted/);
    await nc.close();
  });

  it("agent-auth and payment-gateway follow CHAIN revocations by subscription, and reach no consumer", async () => {
    const operator = await operatorJsm();
    await operator.consumers.add("CHAIN", {
      durable_name: "attestations-api-chain",
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
    });
    for (const user of ["agent-auth", "payment-gateway"]) {
      const nc = await connectNats(server.url, logger, user, { user, pass: passwordOf(user) });
      const seen: string[] = [];
      const metrics = createMetrics({ serviceName: user });
      const follower = await followChainInvalidations({
        nats: nc,
        topology: DEFAULT_TOPOLOGY,
        logger,
        cache: { invalidate: (r) => seen.push(r.attestationId), clear: () => {} },
        meter: metrics.meter,
      });
      // What the service exports of JetStream's own numbers, with its own user's rights only.
      observeJetStream(metrics.meter, await jetstreamManager(nc), { streams: ["CHAIN"], durables: () => [] });
      const attestationId = `0x${user === "agent-auth" ? "a" : "b"}${"0".repeat(63)}`;
      await operatorJs.publish(
        subjectOf(DEFAULT_TOPOLOGY, "CHAIN", "attestation_revoked"),
        JSON.stringify(
          createCloudEvent({
            source: "chain-indexer",
            type: "attestation_revoked",
            data: {
              attestationId,
              revoker: `0x${"1".repeat(40)}`,
              revokerIden3Id: "1",
              recipientDid: "did:x",
              recipientIden3Id: "2",
              revocationTime: 1,
              registry: `0x${"2".repeat(40)}`,
              chainId: 1,
              blockNumber: 1,
              blockHash: `0x${"3".repeat(64)}`,
              logIndex: 0,
              txHash: `0x${"4".repeat(64)}`,
            },
          }),
        ),
      );
      await expect.poll(() => seen, { timeout: 10_000 }).toEqual([attestationId]);
      const text = await metrics.render();
      const revoked = { type: "attestation_revoked" };
      expect(sampleValue(text, "humanpass_cache_invalidation_events_total", revoked)).toBe(1);
      expect(sampleValue(text, "humanpass_cache_invalidation_lag_seconds_count", revoked)).toBe(1);
      expect(sampleValue(text, "humanpass_cache_invalidation_stream_events", revoked)).toBeGreaterThanOrEqual(
        1,
      );
      expect(
        sampleValue(text, "humanpass_jetstream_stream_messages", { stream: "CHAIN" }),
      ).toBeGreaterThanOrEqual(1);
      expect(sampleValue(text, "humanpass_jetstream_account_storage_bytes")).toBeGreaterThan(0);
      await metrics.shutdown();
      await follower.stop();

      const jsm = await jetstreamManager(nc);
      const durable = "attestations-api-chain";
      expect({
        user,
        next: await outcome(pull(nc, "CHAIN", durable)),
        info: await outcome(jsm.consumers.info("CHAIN", durable)),
        delete: await outcome(jsm.consumers.delete("CHAIN", durable)),
        repoint: await outcome(
          jsm.consumers.add("CHAIN", {
            name: durable,
            durable_name: durable,
            ack_policy: AckPolicy.Explicit,
            filter_subject: subjectOf(DEFAULT_TOPOLOGY, "CHAIN", "attestation_revoked"),
          }),
        ),
        ephemeral: await outcome(
          jsm.consumers.add("CHAIN", {
            ack_policy: AckPolicy.None,
            filter_subject: subjectOf(DEFAULT_TOPOLOGY, "CHAIN", "attestation_revoked"),
          }),
        ),
        otherSubject: await subscription(nc, subjectOf(DEFAULT_TOPOLOGY, "CHAIN", "attestation_recorded")),
      }).toEqual({
        user,
        next: expect.stringMatching(DENIED),
        info: expect.stringMatching(DENIED),
        delete: expect.stringMatching(DENIED),
        repoint: expect.stringMatching(DENIED),
        ephemeral: expect.stringMatching(DENIED),
        otherSubject: expect.stringMatching(DENIED),
      });
      await nc.close();
    }
    const info = await operator.consumers.info("CHAIN", "attestations-api-chain");
    expect(info.config.filter_subject ?? "").toBe("");
  });
});

describe("a subscriber (subscriber-acme: VERIFIER and AGENT_AUTH)", () => {
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  beforeAll(async () => {
    nc = await server.connectAs(subscriberUser("acme"));
    jsm = await jetstreamManager(nc);
  });

  it("reads its granted streams through its own durables: info, create, pull, ack, delete", async () => {
    for (const [stream, durable] of [
      ["VERIFIER", "acme_verifier"],
      ["AGENT_AUTH", "acme_agent-auth"],
    ] as const) {
      expect((await jsm.streams.info(stream)).config.name).toBe(stream);
      await jsm.consumers.add(stream, { durable_name: durable, ack_policy: AckPolicy.Explicit });
      expect((await jsm.consumers.info(stream, durable)).name).toBe(durable);
      const msg = await (await jetstream(nc).consumers.get(stream, durable)).next({ expires: 2_000 });
      expect(msg?.subject.startsWith(`${STREAMS[stream].domain}.`)).toBe(true);
      expect(await msg?.ackAck()).toBe(true);
      expect(await jsm.consumers.delete(stream, durable)).toBe(true);
    }
  });

  it("subscribes and replays with @humanpass/events under these permissions", async () => {
    const since = new Date(Date.now() - 60_000);
    const published = createCloudEvent({
      source: "agent-auth",
      type: "human_not_registered",
      data: { did: "did:acme", resource: "r" },
    });
    await operatorJs.publish(
      subjectOf(DEFAULT_TOPOLOGY, "AGENT_AUTH", "human_not_registered"),
      JSON.stringify(published),
    );
    const seen: string[] = [];
    const subscription = await subscribe(nc, {
      stream: "AGENT_AUTH",
      type: "human_not_registered",
      durable: "acme_agent-auth",
      handler: async (event) => {
        seen.push(event.id);
      },
    });
    await expect.poll(() => seen.includes(published.id), { timeout: 10_000 }).toBe(true);
    await subscription.stop();
    const replayed: string[] = [];
    await replaySince(nc, {
      stream: "AGENT_AUTH",
      type: "human_not_registered",
      since,
      consumer: "acme_replay",
      handler: async (event) => {
        replayed.push(event.id);
      },
    });
    expect(replayed).toContain(published.id);
  });

  it("may not publish events, change streams, read other streams or touch another subscriber's consumers", async () => {
    await (await operatorJsm()).consumers.add("VERIFIER", {
      durable_name: "beta_verifier",
      ack_policy: AckPolicy.Explicit,
    });
    const js = jetstream(nc);
    const refused = {
      publishOwnGrantedSubject: await outcome(
        js.publish(eventFor("VERIFIER").subject, eventFor("VERIFIER").payload),
      ),
      publishOther: await outcome(js.publish(eventFor("PAYMENTS").subject, eventFor("PAYMENTS").payload)),
      deadLetter: await outcome(js.publish("dead_letters.acme_verifier", "{}")),
      ...Object.fromEntries(
        Object.entries(await streamChanges(jsm, "VERIFIER")).map(([k, v]) => [`stream ${k}`, v]),
      ),
      ungrantedStreamInfo: await outcome(jsm.streams.info("PAYMENTS")),
      ungrantedStreamDurable: await outcome(
        jsm.consumers.add("PAYMENTS", { durable_name: "acme_verifier", ack_policy: AckPolicy.Explicit }),
      ),
      unprefixedDurable: await outcome(
        jsm.consumers.add("VERIFIER", { durable_name: "acme", ack_policy: AckPolicy.Explicit }),
      ),
      ephemeral: await outcome(jsm.consumers.add("VERIFIER", { ack_policy: AckPolicy.None })),
      otherCreate: await outcome(
        jsm.consumers.add("VERIFIER", { durable_name: "beta_verifier", ack_policy: AckPolicy.Explicit }),
      ),
      otherInfo: await outcome(jsm.consumers.info("VERIFIER", "beta_verifier")),
      otherNext: await outcome(pull(nc, "VERIFIER", "beta_verifier")),
      otherDelete: await outcome(jsm.consumers.delete("VERIFIER", "beta_verifier")),
      serviceDurableDelete: await outcome(jsm.consumers.delete("VERIFIER", "attestations-api-verifier")),
    };
    for (const [call, result] of Object.entries(refused))
      expect({ call, result }).toEqual({ call, result: expect.stringMatching(DENIED) });
    // Nor listen to the event subjects or to other users' inboxes (where their pulled messages arrive).
    for (const subject of ["verifier.>", "_INBOX.>", "_INBOX_subscriber-beta.>", "_INBOX_attestations-api.>"])
      expect({ subject, refused: await subscription(nc, subject) }).toEqual({
        subject,
        refused: expect.stringMatching(DENIED),
      });
    expect((await (await operatorJsm()).consumers.info("VERIFIER", "beta_verifier")).name).toBe(
      "beta_verifier",
    );
  });
});
