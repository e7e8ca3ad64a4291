/**
 * The NATS users of the deployments, on a real nats-server of this file's own whose configuration is generated from
 * the same source as deploy/k8s/base/nats/users.conf (libs/event-bus/src/permissions.ts), with two subscribers'
 * accounts as `npx humanpass nats users-conf --subscriber` prints them. Each allowed call is made and must work;
 * each forbidden one must be refused by the server with a permission error (not a timeout, not a "not found").
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
  applySubscriberStreams,
  applyTopology,
  connectNats,
  createCloudEvent,
  DEAD_LETTERS_USER,
  DEFAULT_TOPOLOGY,
  ensureDurable,
  followChainInvalidations,
  listDeadLetters,
  observeJetStream,
  publishDeadLetter,
  REINDEX_GRANT,
  renderUser,
  renderUsersConf,
  replayDeadLetter,
  replaySince,
  SERVICE_GRANTS,
  SERVICES_API_PREFIX,
  STREAMS,
  type StreamName,
  type SubscriberGrant,
  subjectOf,
  subscribe,
  subscriberPermissions,
  subscriberUser,
  waitForStreams,
} from "../src/index.ts";
import { JetStreamBatchPublisher } from "../src/jetstream-publisher.ts";
import { type AuthNatsServer, passwordOf, startAuthNatsServer } from "./support/nats-server.ts";

const logger = pino({ level: "silent" });
const ALL_STREAMS = Object.keys(STREAMS) as StreamName[];
const SUBSCRIBERS: SubscriberGrant[] = [
  { name: "acme", streams: ["VERIFIER", "AGENT_AUTH"] },
  { name: "beta", streams: ["VERIFIER"] },
];
const USERS = [
  ...SERVICE_GRANTS.map((g) => g.user),
  "topology",
  "operator",
  REINDEX_GRANT.user,
  DEAD_LETTERS_USER,
  ...SUBSCRIBERS.map((g) => subscriberUser(g.name)),
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
  server = await startAuthNatsServer(renderUsersConf(DEFAULT_TOPOLOGY, SUBSCRIBERS), USERS);
  const topologyNc = await server.connectAs("topology");
  const applied = await applyTopology(await jetstreamManager(topologyNc), DEFAULT_TOPOLOGY);
  expect(applied).toEqual([
    "VERIFIER",
    "CHAIN",
    "AGENT_AUTH",
    "PAYMENTS",
    "DEAD_LETTERS",
    ...SERVICE_GRANTS.flatMap((g) => g.durables.map((d) => `${d.stream}/${d.durable}`)),
  ]);
  expect(await applySubscriberStreams(topologyNc, DEFAULT_TOPOLOGY, SUBSCRIBERS)).toEqual([
    "acme:VERIFIER",
    "acme:AGENT_AUTH",
    "beta:VERIFIER",
  ]);
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

const messagesIn = async (stream: string) =>
  (await (await operatorJsm()).streams.info(stream)).state.messages;

/**
 * The existing durable's own configuration sent back as a raw create request, made push (delivering to another
 * stream's subject): what a client whose permissions allow its durable's create subjects could send. The server's
 * answer, or "ok".
 */
async function pushCreate(
  nc: NatsConnection,
  stream: StreamName,
  durable: string,
  extra: Record<string, unknown> = {},
  form: "" | "DURABLE." = "",
): Promise<string> {
  // Another stream's subject (the server refuses a deliver subject of the consumer's own stream, a cycle).
  const target = stream === "CHAIN" ? eventFor("VERIFIER").subject : eventFor("CHAIN").subject;
  const { config } = await (await jetstreamManager(nc)).consumers.info(stream, durable);
  return outcome(
    nc
      .request(
        `$JS.API.CONSUMER.${form}CREATE.${stream}.${durable}`,
        JSON.stringify({ stream_name: stream, config: { ...config, deliver_subject: target, ...extra } }),
      )
      .then((reply) => {
        const error = reply.json<{ error?: { description: string } }>().error;
        if (error) throw new Error(error.description);
      }),
  );
}

describe("the topology user", () => {
  it("creates streams but may not delete, purge, shrink or widen one, nor create one of another name", async () => {
    const jsm = await jetstreamManager(await server.connectAs("topology"));
    const operator = await operatorJsm();
    for (const stream of [...ALL_STREAMS, "DEAD_LETTERS"]) {
      const before = await operator.streams.info(stream);
      const { config } = before;
      const refused = {
        deleted: await outcome(jsm.streams.delete(stream)),
        purge: await outcome(jsm.streams.purge(stream)),
        shrink: await outcome(jsm.streams.update(stream, { ...config, max_msgs: 1, max_bytes: 1024 })),
        widen: await outcome(
          jsm.streams.update(stream, {
            ...config,
            subjects: [...config.subjects, `${stream.toLowerCase()}_x.>`],
          }),
        ),
      };
      expect({ stream, refused }).toEqual({
        stream,
        refused: {
          deleted: expect.stringMatching(DENIED),
          purge: expect.stringMatching(DENIED),
          shrink: expect.stringMatching(DENIED),
          widen: expect.stringMatching(DENIED),
        },
      });
      const after = await operator.streams.info(stream);
      expect({ stream, messages: after.state.messages, config: after.config }).toEqual({
        stream,
        messages: before.state.messages,
        config: before.config,
      });
    }
    expect(await outcome(jsm.streams.add({ name: "OTHER", subjects: ["other.>"] }))).toMatch(DENIED);
  });

  it("leaves an existing stream an operator changed as it is, and reports how it differs", async () => {
    const operator = await operatorJsm();
    const { config } = await operator.streams.info("PAYMENTS");
    await operator.streams.update("PAYMENTS", { ...config, max_bytes: 123_456_789 });
    const drifts: string[] = [];
    const jsm = await jetstreamManager(await server.connectAs("topology"));
    await applyTopology(jsm, DEFAULT_TOPOLOGY, { onDrift: (d) => drifts.push(`${d.stream} ${d.changes}`) });
    expect(drifts).toEqual([`PAYMENTS max_bytes: 123456789 → ${config.max_bytes}`]);
    expect((await operator.streams.info("PAYMENTS")).config.max_bytes).toBe(123_456_789);
    // What `humanpass nats topology --update --confirm` does, as operator.
    await applyTopology(operator, DEFAULT_TOPOLOGY, { update: true });
    expect((await operator.streams.info("PAYMENTS")).config).toEqual(config);
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

  it("attestations-api reads its durables, acks, stores its dead letters; deletes none, turns none into a push consumer", async () => {
    const nc = await server.connectAs("attestations-api");
    const jsm = await jetstreamManager(nc);
    // What its verifier durable filters (uniqueness_verified): the event it reads there.
    const proof = subjectOf(DEFAULT_TOPOLOGY, "VERIFIER", "uniqueness_verified");
    await operatorJs.publish(proof, eventFor("VERIFIER").payload);
    const before = { chain: await messagesIn("CHAIN"), verifier: await messagesIn("VERIFIER") };
    for (const spec of SERVICE_GRANTS.find((g) => g.user === "attestations-api")!.durables) {
      const { stream, durable } = spec;
      // Created by the topology step already: the service's start updates it.
      await ensureDurable(jsm, DEFAULT_TOPOLOGY, spec);
      await ensureDurable(jsm, DEFAULT_TOPOLOGY, { ...spec, ackWaitMs: 20_000 });
      const msg = await (await jetstream(nc).consumers.get(stream, durable)).next({ expires: 2_000 });
      expect(msg?.subject).toBe(spec.type ? proof : eventFor(stream).subject);
      expect(await msg?.ackAck()).toBe(true);
      await jetstream(nc).publish(`dead_letters.${durable}`, "{}", {
        expect: { streamName: "DEAD_LETTERS" },
      });
      // Its own durable's name, asked to deliver to another stream's subject: the server keeps it a pull consumer.
      expect({
        durable,
        delete: await outcome(jsm.consumers.delete(stream, durable)),
        push: await pushCreate(nc, stream, durable),
        pushNoWaiting: await pushCreate(nc, stream, durable, { max_waiting: 0 }),
        pushDurableForm: await pushCreate(nc, stream, durable, { max_waiting: 0 }, "DURABLE."),
      }).toEqual({
        durable,
        delete: expect.stringMatching(DENIED),
        push: expect.stringMatching(/can not set max waiting/),
        pushNoWaiting: expect.stringMatching(/max waiting can not be updated/),
        pushDurableForm: expect.stringMatching(DENIED),
      });
      expect((await jsm.consumers.info(stream, durable)).config.deliver_subject).toBeUndefined();
    }
    expect({ chain: await messagesIn("CHAIN"), verifier: await messagesIn("VERIFIER") }).toEqual(before);
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

  it("the reindex user deletes and creates attestations-api's durables again, and nothing else", async () => {
    const nc = await server.connectAs(REINDEX_GRANT.user);
    const jsm = await jetstreamManager(nc);
    for (const { stream, durable } of REINDEX_GRANT.durables) {
      expect(await jsm.consumers.delete(stream, durable)).toBe(true);
      await ensureDurable(jsm, DEFAULT_TOPOLOGY, { stream, durable });
      expect(await jsm.consumers.delete(stream, durable)).toBe(true);
    }
    expect({
      otherDurable: await outcome(jsm.consumers.delete("CHAIN", "webhooks-chain")),
      publish: await outcome(jetstream(nc).publish(eventFor("CHAIN").subject, eventFor("CHAIN").payload)),
      purge: await outcome(jsm.streams.purge("CHAIN")),
    }).toEqual({
      otherDurable: expect.stringMatching(DENIED),
      publish: expect.stringMatching(DENIED),
      purge: expect.stringMatching(DENIED),
    });
  });

  it("the dead-letters user lists and replays dead letters, and changes no stream or durable", async () => {
    const nc = await server.connectAs(DEAD_LETTERS_USER);
    const operator = await server.connectAs("operator");
    const original = (await (
      await operatorJsm()
    ).streams.getMessage("PAYMENTS", {
      last_by_subj: eventFor("PAYMENTS").subject,
    }))!;
    await publishDeadLetter(operator, DEFAULT_TOPOLOGY, {
      consumer: "webhooks-payments",
      stream: "PAYMENTS",
      streamSeq: original.seq,
      subject: original.subject,
      payload: original.string(),
      error: "test",
      attempts: 5,
      deadLetteredAt: new Date().toISOString(),
    });
    const letters = await listDeadLetters(nc, DEFAULT_TOPOLOGY, { consumer: "webhooks-payments" });
    expect(letters).toHaveLength(1);
    const before = await messagesIn("PAYMENTS");
    await replayDeadLetter(nc, DEFAULT_TOPOLOGY, letters[0]!);
    expect(await messagesIn("PAYMENTS")).toBe(before + 1);
    expect(await listDeadLetters(nc, DEFAULT_TOPOLOGY, { consumer: "webhooks-payments" })).toEqual([]);
    const jsm = await jetstreamManager(nc);
    expect({
      purge: await outcome(jsm.streams.purge("PAYMENTS")),
      durable: await outcome(
        jsm.consumers.add("CHAIN", { durable_name: "x", ack_policy: AckPolicy.Explicit }),
      ),
    }).toEqual({ purge: expect.stringMatching(DENIED), durable: expect.stringMatching(DENIED) });
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

describe("a subscriber (subscriber-acme: VERIFIER and AGENT_AUTH, in account SUBSCRIBER_ACME)", () => {
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  beforeAll(async () => {
    nc = await server.connectAs(subscriberUser("acme"));
    jsm = await jetstreamManager(nc);
  });

  it("reads its copies of the granted streams, sourced from the services' account", async () => {
    for (const stream of ["VERIFIER", "AGENT_AUTH"] as const) {
      await expect
        .poll(async () => (await jsm.streams.info(stream)).state.messages, { timeout: 10_000 })
        .toBe(await messagesIn(stream));
      const durable = `acme_${stream.toLowerCase()}`;
      await jsm.consumers.add(stream, { durable_name: durable, ack_policy: AckPolicy.Explicit });
      const msg = await (await jetstream(nc).consumers.get(stream, durable)).next({ expires: 2_000 });
      expect(msg?.subject).toBe(eventFor(stream).subject);
      expect(await msg?.ackAck()).toBe(true);
      expect(await jsm.consumers.delete(stream, durable)).toBe(true);
    }
    // Its consumers live in its account: none of them is on the services' streams.
    const services = await operatorJsm();
    for (const stream of ["VERIFIER", "AGENT_AUTH"]) {
      const names: string[] = [];
      for await (const c of services.consumers.list(stream)) names.push(c.name);
      expect(names.filter((n) => n.startsWith("acme"))).toEqual([]);
    }
  });

  it("subscribes and replays with @humanpass/events, and follows with an ephemeral consumer", async () => {
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
      consumer: "anything-in-its-own-account",
      handler: async (event) => {
        replayed.push(event.id);
      },
    });
    expect(replayed).toContain(published.id);
    const ordered = await jetstream(nc).consumers.get("AGENT_AUTH", { deliver_policy: DeliverPolicy.All });
    expect((await ordered.next({ expires: 2_000 }))?.subject.startsWith("agent_auth.")).toBe(true);
  });

  it("cannot make the server deliver into the services' account: chain.blocks_reverted gets nothing", async () => {
    // agent-auth follows chain.blocks_reverted, as in the report: the interest a push consumer delivers to.
    const agentAuth = await server.connectAs("agent-auth");
    const injected: string[] = [];
    const follower = agentAuth.subscribe(subjectOf(DEFAULT_TOPOLOGY, "CHAIN", "blocks_reverted"), {
      callback: (_e, m) => {
        injected.push(m.subject);
      },
    });
    await agentAuth.flush();
    // And so does the subscriber, in its own account: where its push consumer's deliveries arrive.
    const delivered: string[] = [];
    const own = nc.subscribe(subjectOf(DEFAULT_TOPOLOGY, "CHAIN", "blocks_reverted"), {
      callback: (_e, m) => {
        delivered.push(m.subject);
      },
    });
    await nc.flush();
    const chainBefore = await messagesIn("CHAIN");
    const attempt = await deliverSubjectInjection(nc, "AGENT_AUTH");
    expect(attempt).toEqual({
      // In its own account: allowed, and its deliveries stay there.
      pushOnItsCopy: "ok",
      // The services' consumer API its copies' sources use, and the copies' configuration: refused.
      pushThroughImport: expect.stringMatching(DENIED),
      redirectCopy: expect.stringMatching(DENIED),
      newSourcedStream: expect.stringMatching(DENIED),
      publishEvent: expect.stringMatching(DENIED),
    });
    const copy = (await jsm.streams.info("AGENT_AUTH")).state.messages;
    await expect.poll(() => delivered.length, { timeout: 10_000 }).toBe(copy);
    await agentAuth.flush();
    expect({ chain: await messagesIn("CHAIN"), injected }).toEqual({ chain: chainBefore, injected: [] });
    follower.unsubscribe();
    own.unsubscribe();
  });

  it("may not change its copies, read another stream, publish, or reach the services' flow control", async () => {
    const { config } = await jsm.streams.info("VERIFIER");
    const refused = {
      deleteCopy: await outcome(jsm.streams.delete("VERIFIER")),
      purgeCopy: await outcome(jsm.streams.purge("VERIFIER")),
      shrinkCopy: await outcome(jsm.streams.update("VERIFIER", { ...config, max_msgs: 1 })),
      ungrantedStream: await outcome(jsm.streams.info("PAYMENTS")),
      deadLetter: await outcome(jetstream(nc).publish("dead_letters.acme_verifier", "{}")),
      flowControl: await outcome(nc.request("$JS.FC.VERIFIER.x", "")),
    };
    for (const [call, result] of Object.entries(refused))
      expect({ call, result }).toEqual({ call, result: expect.stringMatching(DENIED) });
  });
});

/**
 * What subscriber-acme tried in the report: a push consumer delivering its stream's events to
 * chain.blocks_reverted, on the stream it reads; then through the imports of its account. Each call's outcome.
 */
async function deliverSubjectInjection(nc: NatsConnection, stream: StreamName) {
  const jsm = await jetstreamManager(nc);
  const target = subjectOf(DEFAULT_TOPOLOGY, "CHAIN", "blocks_reverted");
  const push = {
    durable_name: "acme_push",
    ack_policy: AckPolicy.None,
    deliver_policy: DeliverPolicy.All,
    deliver_subject: target,
  };
  const { config } = await jsm.streams.info(stream);
  const imported = await jetstreamManager(nc, { apiPrefix: SERVICES_API_PREFIX, checkAPI: false });
  return {
    pushOnItsCopy: await outcome(jsm.consumers.add(stream, push)),
    pushThroughImport: await outcome(imported.consumers.add(stream, { ...push, durable_name: "acme_push2" })),
    redirectCopy: await outcome(
      jsm.streams.update(stream, {
        ...config,
        sources: config.sources?.map((src) => ({
          ...src,
          external: { api: SERVICES_API_PREFIX, deliver: "chain" },
        })),
      }),
    ),
    newSourcedStream: await outcome(
      jsm.streams.add({
        name: "STOLEN",
        sources: [{ name: "CHAIN", external: { api: SERVICES_API_PREFIX, deliver: "chain" } }],
      }),
    ),
    publishEvent: await outcome(jetstream(nc).publish(target, eventFor("CHAIN").payload, { timeout: 2_000 })),
  };
}

describe("the same subscriber put back into the services' account", () => {
  it("writes into CHAIN with the same calls: what the accounts prevent", async () => {
    const acme = { name: "acme", streams: ["VERIFIER", "AGENT_AUTH"] as StreamName[] };
    const config = [
      "accounts {",
      "  HUMANPASS: {",
      "    jetstream: enabled",
      "    users: [",
      renderUser("operator", "$NATS_OPERATOR_PASSWORD"),
      renderUser(
        subscriberUser("acme"),
        "$NATS_SUBSCRIBER_ACME_PASSWORD",
        subscriberPermissions(acme, DEFAULT_TOPOLOGY),
      ),
      "    ]",
      "  }",
      "}",
      "",
    ].join("\n");
    const shared = await startAuthNatsServer(config, ["operator", subscriberUser("acme")]);
    try {
      const operatorNc = await shared.connectAs("operator");
      const operator = await jetstreamManager(operatorNc);
      await applyTopology(operator, DEFAULT_TOPOLOGY);
      // The gateway's follow of chain.blocks_reverted: the interest the push consumer delivers to.
      operatorNc.subscribe(subjectOf(DEFAULT_TOPOLOGY, "CHAIN", "blocks_reverted"));
      await operatorNc.flush();
      for (const stream of ["AGENT_AUTH", "CHAIN"] as const)
        await operator.jetstream().publish(eventFor(stream).subject, eventFor(stream).payload);
      const attempt = await deliverSubjectInjection(
        await shared.connectAs(subscriberUser("acme")),
        "AGENT_AUTH",
      );
      expect(attempt.pushOnItsCopy).toBe("ok");
      await expect
        .poll(async () => (await operator.streams.info("CHAIN")).state.messages, { timeout: 10_000 })
        .toBe(2);
    } finally {
      await shared.stop();
    }
  });
});

describe("the services' durables, created by the topology step before the services start", () => {
  const target = subjectOf(DEFAULT_TOPOLOGY, "CHAIN", "blocks_reverted");

  /** What a service user could send for its own durable's name: a push consumer delivering to `target`. */
  const pushDurable = (nc: NatsConnection, stream: StreamName, durable: string) =>
    outcome(
      nc
        .request(
          `$JS.API.CONSUMER.CREATE.${stream}.${durable}`,
          JSON.stringify({
            stream_name: stream,
            config: {
              durable_name: durable,
              ack_policy: AckPolicy.None,
              deliver_policy: DeliverPolicy.All,
              deliver_subject: target,
            },
          }),
        )
        .then((reply) => {
          const error = reply.json<{ error?: { description: string } }>().error;
          if (error) throw new Error(error.description);
        }),
    );

  it("are pull consumers its user cannot make push; where one is missing, its user could (the control)", async () => {
    // agent-auth follows chain.blocks_reverted: the interest a push consumer delivers to.
    const agentAuth = await server.connectAs("agent-auth");
    const injected: string[] = [];
    const follower = agentAuth.subscribe(target, {
      callback: (_e, m) => {
        injected.push(m.subject);
      },
    });
    await agentAuth.flush();
    const webhooks = await server.connectAs("webhooks");
    const operator = await operatorJsm();
    const chainBefore = await messagesIn("CHAIN");

    const preCreated = await pushDurable(webhooks, "AGENT_AUTH", "webhooks-agent_auth");
    expect(preCreated).toMatch(/can not be updated/);
    const kept = (await operator.consumers.info("AGENT_AUTH", "webhooks-agent_auth")).config;
    expect(kept.deliver_subject).toBeUndefined();

    // The same request where the durable does not exist yet: the server copies PAYMENTS into CHAIN.
    await operator.consumers.delete("PAYMENTS", "webhooks-payments");
    expect(await pushDurable(webhooks, "PAYMENTS", "webhooks-payments")).toBe("ok");
    const payments = await messagesIn("PAYMENTS");
    // Each of PAYMENTS's messages reaches the gateway's follow, and CHAIN stores them (one per message id).
    await expect.poll(() => injected.length, { timeout: 10_000 }).toBe(payments);
    await expect.poll(() => messagesIn("CHAIN"), { timeout: 10_000 }).toBeGreaterThan(chainBefore);
    // Only the missing durable's deliveries arrived: none of AGENT_AUTH's, whose durable existed.
    await agentAuth.flush();
    expect(injected).toHaveLength(payments);
    follower.unsubscribe();

    // The topology step reports the hijacked durable and leaves it; `--update --confirm`, as operator, repairs it.
    const topologyJsm = await jetstreamManager(await server.connectAs("topology"));
    const drifts: string[] = [];
    await applyTopology(topologyJsm, DEFAULT_TOPOLOGY, {
      onDrift: (d) => drifts.push(`${d.stream} ${d.durable} ${d.changes.join(", ")}`),
    });
    // (attestations-api-chain differs too: an earlier test re-pointed it as operator.)
    expect(drifts.filter((d) => d.startsWith("PAYMENTS"))).toEqual([
      expect.stringMatching(
        /^PAYMENTS webhooks-payments ack_policy: "none" → "explicit", .*deliver_subject: "chain\.blocks_reverted" → undefined$/,
      ),
    ]);
    await applyTopology(operator, DEFAULT_TOPOLOGY, { update: true });
    const repaired = (await operator.consumers.info("PAYMENTS", "webhooks-payments")).config;
    expect({ deliver: repaired.deliver_subject, ack: repaired.ack_policy }).toEqual({
      deliver: undefined,
      ack: AckPolicy.Explicit,
    });
  });

  it("are read by the service that owns them (its start finds them created)", async () => {
    const before = (await (await operatorJsm()).consumers.info("CHAIN", "webhooks-chain")).delivered
      .stream_seq;
    const nc = await server.connectAs("webhooks");
    const spec = SERVICE_GRANTS.find((g) => g.user === "webhooks")!.durables.find(
      (d) => d.stream === "CHAIN",
    )!;
    await ensureDurable(await jetstreamManager(nc), DEFAULT_TOPOLOGY, spec);
    const msg = await (await jetstream(nc).consumers.get("CHAIN", spec.durable)).next({ expires: 2_000 });
    expect(msg?.seq).toBe(before + 1);
    expect(await msg?.ackAck()).toBe(true);
  });
});
