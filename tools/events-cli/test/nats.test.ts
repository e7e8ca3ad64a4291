/**
 * `humanpass nats …` end to end: the users.conf it prints plus the subscriber entry it prints, loaded by a real
 * nats-server of this file's own; the topology applied with the `topology` user; the subscriber connecting with
 * the password it was given, reading through its durable and refused anything else. Compose's users file
 * (deploy/compose/nats-users.conf) is the same output plus examples/subscriber's entry, and lets that subscriber in
 * with compose's dev password.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { inboxPrefixOf, passwordVariable, SERVICE_GRANTS } from "@humanpass/event-bus";
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
  [...SERVICE_GRANTS.map((g) => g.user), "topology", "operator"].map((u) => [passwordVariable(u), `pw-${u}`]),
);

let server: OwnNatsServer;
let subscriberPassword: string;
const open: NatsConnection[] = [];

beforeAll(async () => {
  const conf = await run(["users-conf"]);
  expect(conf.out).toBe(readFileSync(path.join(REPO_ROOT, "deploy/k8s/base/nats/users.conf"), "utf8"));
  const subscriber = await run(["subscriber", "acme", "--streams", "verifier,chain"]);
  expect(subscriber.code).toBe(0);
  expect(subscriber.out).toContain("password: $NATS_SUBSCRIBER_ACME_PASSWORD");
  subscriberPassword = /NATS_SUBSCRIBER_ACME_PASSWORD=(\S+)/.exec(subscriber.err)![1];
  expect(subscriber.out).not.toContain(subscriberPassword);
  // The entry goes at the end of the users list, as docs/events.md tells an operator.
  const config = conf.out.replace(/\n {2}\]\n\}\n$/, `\n${subscriber.out}  ]\n}\n`);
  server = await startOwnNatsServer({
    config,
    env: { ...SERVICE_PASSWORDS, NATS_SUBSCRIBER_ACME_PASSWORD: subscriberPassword },
    probe: { user: "operator", pass: "pw-operator" },
  });
  const topology = await run(["topology", "--server", server.url], {
    NATS_USER: "topology",
    NATS_PASSWORD: "pw-topology",
  });
  expect(topology).toMatchObject({
    code: 0,
    err: expect.stringContaining("VERIFIER, CHAIN, AGENT_AUTH, PAYMENTS, DEAD_LETTERS"),
  });
});

afterAll(async () => {
  await Promise.all(open.map((nc) => nc.close()));
  await server?.stop();
});

describe("humanpass nats subscriber", () => {
  it("prints an entry whose user reads its streams through its own durables and may do nothing else", async () => {
    const nc = await connect({
      servers: server.url,
      user: "subscriber-acme",
      pass: subscriberPassword,
      inboxPrefix: inboxPrefixOf("subscriber-acme"),
    });
    open.push(nc);
    const operator = await connect({ servers: server.url, user: "operator", pass: "pw-operator" });
    open.push(operator);
    await jetstream(operator).publish("verifier.uniqueness_verified", "{}");

    const jsm = await jetstreamManager(nc);
    await jsm.consumers.add("VERIFIER", { durable_name: "acme_verifier", ack_policy: AckPolicy.Explicit });
    const msg = await (await jetstream(nc).consumers.get("VERIFIER", "acme_verifier")).next({
      expires: 2_000,
    });
    expect(msg?.subject).toBe("verifier.uniqueness_verified");
    expect(await msg?.ackAck()).toBe(true);
    await jsm.consumers.add("CHAIN", { durable_name: "acme_chain", ack_policy: AckPolicy.Explicit });

    const refused = await Promise.all(
      [
        jsm.consumers.add("VERIFIER", { durable_name: "someone_verifier", ack_policy: AckPolicy.Explicit }),
        jsm.streams.delete("VERIFIER"),
        jsm.streams.info("PAYMENTS"),
        jetstream(nc).publish("verifier.uniqueness_verified", "{}"),
      ].map((p) =>
        p.then(
          () => "ok",
          (e: Error) => e.message,
        ),
      ),
    );
    for (const r of refused) expect(r).toMatch(/permissions violation/i);
  });

  it("refuses names outside the subscriber's prefix and unknown streams", () => {
    expect(() =>
      parseNatsArgs("subscriber", ["acme", "--streams", "VERIFIER", "--durables", "other_x"]),
    ).toThrow(UsageError);
    expect(() => parseNatsArgs("subscriber", ["Acme_1", "--streams", "VERIFIER"])).toThrow(/lower-case/);
    expect(() => parseNatsArgs("subscriber", ["acme", "--streams", "SECRETS"])).toThrow(
      /unknown stream SECRETS/,
    );
    expect(() => parseNatsArgs("subscriber", ["acme"])).toThrow(/--streams is required/);
  });
});

const COMPOSE_USERS = readFileSync(path.join(REPO_ROOT, "deploy/compose/nats-users.conf"), "utf8");
const COMPOSE = readFileSync(path.join(REPO_ROOT, "docker-compose.yml"), "utf8");

describe("deploy/compose/nats-users.conf (the `subscriber` profile)", () => {
  it("is users-conf plus the entry of `humanpass nats subscriber example --streams AGENT_AUTH,PAYMENTS`", async () => {
    const conf = await run(["users-conf"]);
    const example = await run(["subscriber", "example", "--streams", "AGENT_AUTH,PAYMENTS"]);
    const generated = conf.out.replace(/\n {2}\]\n\}\n$/, `\n${example.out}  ]\n}\n`);
    expect(generated).not.toBe(conf.out);
    expect(COMPOSE_USERS.endsWith(generated)).toBe(true);
    const header = COMPOSE_USERS.slice(0, -generated.length).split("\n").slice(0, -1);
    expect(header.filter((line) => !line.startsWith("#"))).toEqual([]);
    expect(COMPOSE).toContain("- ./deploy/compose/nats-users.conf:/etc/nats/users.conf:ro");
  });

  it("lets subscriber-example in with compose's dev password, through examples/subscriber's durables only", async () => {
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
      });
      expect(topology.code).toBe(0);
      const operator = await connect({ servers: own.url, user: "operator", pass: "pw-operator" });
      open.push(operator);
      const nc = await connect({
        servers: own.url,
        user: "subscriber-example",
        pass: defaults[0]!,
        inboxPrefix: inboxPrefixOf("subscriber-example"),
      });
      open.push(nc);
      const jsm = await jetstreamManager(nc);
      for (const [stream, subject, durable] of [
        ["AGENT_AUTH", "agent_auth.human_verified", "example_agent-auth"],
        ["PAYMENTS", "payments.human_verified", "example_payments"],
      ] as const) {
        await jetstream(operator).publish(subject, "{}");
        await jsm.consumers.add(stream, { durable_name: durable, ack_policy: AckPolicy.Explicit });
        const msg = await (await jetstream(nc).consumers.get(stream, durable)).next({ expires: 2_000 });
        expect(msg?.subject).toBe(subject);
        expect(await msg?.ackAck()).toBe(true);
      }
      const refused = await Promise.all(
        [
          jsm.consumers.add("AGENT_AUTH", {
            durable_name: "other_agent-auth",
            ack_policy: AckPolicy.Explicit,
          }),
          jsm.streams.info("VERIFIER"),
          jsm.streams.delete("PAYMENTS"),
          jetstream(nc).publish("agent_auth.human_verified", "{}"),
        ].map((p) =>
          p.then(
            () => "ok",
            (e: Error) => e.message,
          ),
        ),
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
