/**
 * `humanpass nats …` end to end: the accounts file it prints with a subscriber, loaded by a real nats-server of this
 * file's own; the topology and the subscriber's copies created with the `topology` user; the subscriber connecting
 * with the password it was given, reading its copies and refused anything else; a stream change refused to the
 * topology user and applied only with `--update --confirm`. Compose's users file (deploy/compose/nats-users.conf,
 * also make up's) is the same output with examples/subscriber's account, and lets that subscriber in with the dev
 * password.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { DEAD_LETTERS_USER, passwordVariable, REINDEX_GRANT, SERVICE_GRANTS } from "@humanpass/event-bus";
import { createTestDatabase, type OwnNatsServer, REPO_ROOT, startOwnNatsServer } from "@humanpass/testing";
import { AckPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UsageError } from "../src/args.ts";
import { parseNatsArgs, runNats } from "../src/nats.ts";

async function run(argv: string[], env: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const saved = { ...process.env };
  Object.assign(process.env, env);
  try {
    const code = await runNats(parseNatsArgs(argv[0], argv.slice(1), { ...process.env, ...env }), {
      out: (t) => out.push(t),
      err: (l) => err.push(l),
    });
    return { code, out: out.join(""), err: err.join("\n") };
  } finally {
    process.env = saved;
  }
}

const SERVICE_PASSWORDS = Object.fromEntries(
  [...SERVICE_GRANTS.map((g) => g.user), "topology", "operator", REINDEX_GRANT.user, DEAD_LETTERS_USER].map(
    (u) => [passwordVariable(u), `pw-${u}`],
  ),
);

let server: OwnNatsServer;
let subscriberPassword: string;
const open: NatsConnection[] = [];

beforeAll(async () => {
  expect((await run(["users-conf"])).out).toBe(
    readFileSync(path.join(REPO_ROOT, "deploy/k8s/base/nats/users.conf"), "utf8"),
  );
  const subscriber = await run(["subscriber", "acme", "--streams", "verifier,chain"]);
  expect(subscriber.code).toBe(0);
  expect(subscriber.out).toContain("password: $NATS_SUBSCRIBER_ACME_PASSWORD");
  subscriberPassword = /NATS_SUBSCRIBER_ACME_PASSWORD=(\S+)/.exec(subscriber.err)![1];
  expect(subscriber.out).not.toContain(subscriberPassword);
  expect(subscriber.err).toContain("users-conf --subscriber acme=VERIFIER,CHAIN");
  // The account entry it printed is what users-conf writes for that subscriber.
  const conf = await run(["users-conf", "--subscriber", "acme=VERIFIER,CHAIN"]);
  expect(conf.out).toContain(subscriber.out);
  server = await startOwnNatsServer({
    config: conf.out,
    env: { ...SERVICE_PASSWORDS, NATS_SUBSCRIBER_ACME_PASSWORD: subscriberPassword },
    probe: { user: "operator", pass: "pw-operator" },
  });
  const topology = await run(["topology", "--server", server.url], {
    NATS_USER: "topology",
    NATS_PASSWORD: "pw-topology",
    NATS_SUBSCRIBERS: "acme=VERIFIER,CHAIN",
  });
  expect(topology).toMatchObject({
    code: 0,
    err: expect.stringMatching(
      /^streams and durables applied: VERIFIER, CHAIN, AGENT_AUTH, PAYMENTS, DEAD_LETTERS, CHAIN\/attestations-api-chain, .*, acme:VERIFIER, acme:CHAIN$/,
    ),
  });
});

afterAll(async () => {
  await Promise.all(open.map((nc) => nc.close()));
  await server?.stop();
});

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => "ok",
    (e: Error) => e.message,
  );

describe("humanpass nats subscriber", () => {
  it("prints an account whose user reads copies of its streams and may change nothing of the services'", async () => {
    const nc = await connect({ servers: server.url, user: "subscriber-acme", pass: subscriberPassword });
    open.push(nc);
    const operator = await connect({ servers: server.url, user: "operator", pass: "pw-operator" });
    open.push(operator);
    await jetstream(operator).publish("verifier.uniqueness_verified", "{}");

    const jsm = await jetstreamManager(nc);
    await jsm.consumers.add("VERIFIER", { durable_name: "anything", ack_policy: AckPolicy.Explicit });
    const msg = await (await jetstream(nc).consumers.get("VERIFIER", "anything")).next({ expires: 5_000 });
    expect(msg?.subject).toBe("verifier.uniqueness_verified");
    expect(await msg?.ackAck()).toBe(true);

    const refused = await Promise.all(
      [
        jsm.streams.delete("VERIFIER"),
        jsm.streams.info("PAYMENTS"),
        jetstream(nc).publish("verifier.uniqueness_verified", "{}"),
      ].map(refusal),
    );
    for (const r of refused) expect(r).toMatch(/permissions violation/i);
  });

  it("refuses bad names and unknown streams", () => {
    expect(() => parseNatsArgs("subscriber", ["Acme_1", "--streams", "VERIFIER"])).toThrow(/lower-case/);
    expect(() => parseNatsArgs("subscriber", ["acme", "--streams", "SECRETS"])).toThrow(
      /unknown stream SECRETS/,
    );
    expect(() => parseNatsArgs("subscriber", ["acme"])).toThrow(/--streams is required/);
    expect(() => parseNatsArgs("users-conf", ["--subscriber", "acme"])).toThrow(UsageError);
  });
});

describe("humanpass nats topology", () => {
  it("reports a changed stream without changing it; --update shows, --update --confirm (operator) applies", async () => {
    const bigger = { JETSTREAM_PAYMENTS_MAX_BYTES: "3GiB" };
    const asTopology = { NATS_USER: "topology", NATS_PASSWORD: "pw-topology", ...bigger };
    const reported = await run(["topology", "--server", server.url], asTopology);
    expect(reported.code).toBe(0);
    expect(reported.err).toContain(`PAYMENTS differs from the topology: max_bytes:`);
    expect(reported.err).toContain("npx humanpass nats topology --update --confirm");
    const operator = { NATS_USER: "operator", NATS_PASSWORD: "pw-operator", ...bigger };
    const shown = await run(["topology", "--server", server.url, "--update"], operator);
    expect(shown.code).toBe(1);
    expect(shown.err).toContain("add --confirm");
    const nc = await connect({ servers: server.url, user: "operator", pass: "pw-operator" });
    open.push(nc);
    const maxBytes = async () =>
      (await (await jetstreamManager(nc)).streams.info("PAYMENTS")).config.max_bytes;
    expect(await maxBytes()).not.toBe(3 * 1024 ** 3);
    // The topology user may not update, even when told to.
    await expect(
      run(["topology", "--server", server.url, "--update", "--confirm"], asTopology),
    ).rejects.toThrow(/permissions violation/i);
    const applied = await run(["topology", "--server", server.url, "--update", "--confirm"], operator);
    expect(applied).toMatchObject({ code: 0, err: expect.stringContaining("PAYMENTS updated: max_bytes:") });
    expect(await maxBytes()).toBe(3 * 1024 ** 3);
    expect(() => parseNatsArgs("topology", ["--confirm"])).toThrow(/--confirm goes with --update/);
  });
});

const COMPOSE_USERS = readFileSync(path.join(REPO_ROOT, "deploy/compose/nats-users.conf"), "utf8");
const COMPOSE = readFileSync(path.join(REPO_ROOT, "docker-compose.yml"), "utf8");

describe("deploy/compose/nats-users.conf (the `subscriber` profile)", () => {
  it("is `humanpass nats users-conf --subscriber example=AGENT_AUTH,PAYMENTS`", async () => {
    const generated = (await run(["users-conf", "--subscriber", "example=AGENT_AUTH,PAYMENTS"])).out;
    expect(COMPOSE_USERS.endsWith(generated)).toBe(true);
    const header = COMPOSE_USERS.slice(0, -generated.length).split("\n").slice(0, -1);
    expect(header.filter((line) => !line.startsWith("#"))).toEqual([]);
    expect(COMPOSE).toContain("- ./deploy/compose/nats-users.conf:/etc/nats/users.conf:ro");
  });

  it("lets subscriber-example in with the dev password, to its copies of AGENT_AUTH and PAYMENTS only", async () => {
    const defaults = [...COMPOSE.matchAll(/\$\{NATS_SUBSCRIBER_EXAMPLE_PASSWORD:-([^}]+)\}/g)].map(
      (m) => m[1],
    );
    // The nats service's and example-subscriber's: the same default.
    expect(defaults).toHaveLength(2);
    expect(new Set(defaults).size).toBe(1);
    const own = await startOwnNatsServer({
      config: COMPOSE_USERS,
      env: { ...SERVICE_PASSWORDS, NATS_SUBSCRIBER_EXAMPLE_PASSWORD: defaults[0]! },
      probe: { user: "operator", pass: "pw-operator" },
    });
    try {
      const topology = await run(["topology", "--server", own.url], {
        NATS_USER: "topology",
        NATS_PASSWORD: "pw-topology",
        NATS_SUBSCRIBERS: "example=AGENT_AUTH,PAYMENTS",
      });
      expect(topology.code).toBe(0);
      const operator = await connect({ servers: own.url, user: "operator", pass: "pw-operator" });
      open.push(operator);
      const nc = await connect({ servers: own.url, user: "subscriber-example", pass: defaults[0]! });
      open.push(nc);
      const jsm = await jetstreamManager(nc);
      for (const [stream, subject, durable] of [
        ["AGENT_AUTH", "agent_auth.human_verified", "example_agent-auth"],
        ["PAYMENTS", "payments.human_verified", "example_payments"],
      ] as const) {
        await jetstream(operator).publish(subject, "{}");
        await jsm.consumers.add(stream, { durable_name: durable, ack_policy: AckPolicy.Explicit });
        const msg = await (await jetstream(nc).consumers.get(stream, durable)).next({ expires: 5_000 });
        expect(msg?.subject).toBe(subject);
        expect(await msg?.ackAck()).toBe(true);
      }
      const refused = await Promise.all(
        [
          jsm.streams.info("VERIFIER"),
          jsm.streams.delete("PAYMENTS"),
          jetstream(nc).publish("agent_auth.human_verified", "{}"),
        ].map(refusal),
      );
      for (const r of refused) expect(r).toMatch(/permissions violation/i);

      // examples/subscriber itself, as the profile starts it: subscribed to both streams as subscriber-example.
      const database = await createTestDatabase("compose_subscriber");
      const example = spawn(process.execPath, [path.join(REPO_ROOT, "examples/subscriber/src/main.mjs")], {
        env: {
          PATH: process.env.PATH ?? "",
          DATABASE_URL: database.url,
          NATS_URL: own.url,
          NATS_USER: "subscriber-example",
          NATS_PASSWORD: defaults[0]!,
          SUBSCRIBER_NAME: "example",
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      const output: string[] = [];
      example.stderr!.on("data", (chunk) => output.push(String(chunk)));
      const exited = new Promise((resolve) => example.once("exit", resolve));
      try {
        const subscribed = await new Promise<string>((resolve, reject) => {
          createInterface({ input: example.stdout! }).on("line", (line) => {
            output.push(line);
            if (line.includes('"msg":"subscribed"')) resolve(line);
          });
          example.once("exit", (code) =>
            reject(new Error(`the example exited (${code}): ${output.join("\n")}`)),
          );
        });
        expect(JSON.parse(subscribed).durables).toEqual(["example_agent-auth", "example_payments"]);
      } finally {
        example.kill("SIGTERM");
        await exited;
        await database.drop();
      }
    } finally {
      await own.stop();
    }
  });
});
