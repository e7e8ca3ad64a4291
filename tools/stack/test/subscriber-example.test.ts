/**
 * examples/subscriber as an outside team runs it, with docs/events.md's steps against the stack `make up` starts:
 * `npx humanpass nats subscriber acme --streams AGENT_AUTH,PAYMENTS` prints the account and a password, make up's
 * own nats-server (`startLocalNats`, the committed users) starts with NATS_SUBSCRIBERS and that password, and
 * `npm pack` of @humanpass/events installed into a copy of the example outside the workspace runs with plain node as
 * subscriber-acme, following human_verified into its own Postgres table. 200 claims through agent-auth, each a
 * human_verified event, with the subscriber killed (SIGKILL) halfway and started again: every event is in its table
 * exactly once. The same claims reach a webhook endpoint registered through the webhooks service's admin API, each
 * signed and accepted once. The CLI's calls a subscriber or the topology user may not make are refused.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { createPool, type Pool } from "@humanpass/db";
import { OPERATOR_USER, parseSubscriberGrants, verifyWebhook } from "@humanpass/event-bus";
import { createTestDatabase, eventually, type TestDatabase } from "@humanpass/testing";
import { outsideNpmEnv, packPackage } from "@humanpass/testing/packing";
import { freePort } from "@humanpass/testing/ports";
import { REPO_ROOT } from "@humanpass/testing/service-process";
import { DeliverPolicy, jetstream } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalNats, startLocalNats } from "../src/local-nats.ts";
import { DEV_WEBHOOKS_ADMIN_TOKEN, type Stack, startStack } from "../src/stack.ts";

const run = promisify(execFile);
const CLI = path.join(REPO_ROOT, "tools/events-cli/bin/humanpass.mjs");
const CLAIMS = 200;
const EXAMPLE = path.join(REPO_ROOT, "examples/subscriber");

let project: string;
let stackDatabase: TestDatabase;
let ownDatabase: TestDatabase;
let own: Pool;
let stack: Stack;
let nats: LocalNats;
let natsStore: string;
let acmePassword: string;
let nc: NatsConnection;
let subscriber: ChildProcess | undefined;
const logs: string[] = [];
let receiver: Server;
let webhookSecret = "";
/** What the webhook receiver accepted: deliveries per webhook-id, and deliveries it refused. */
const hooks = { accepted: new Map<string, number>(), refused: 0 };

/** A team's webhook endpoint: verifies each delivery and counts it by webhook-id. */
async function startReceiver(): Promise<string> {
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (c: Buffer) => chunks.push(c));
    request.on("end", () => {
      try {
        const event = verifyWebhook(Buffer.concat(chunks), request.headers as Record<string, string>, {
          secret: webhookSecret,
        });
        hooks.accepted.set(event.id, (hooks.accepted.get(event.id) ?? 0) + 1);
        response.writeHead(204).end();
      } catch {
        hooks.refused++;
        response.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const address = receiver.address() as { port: number };
  return `http://127.0.0.1:${address.port}/hooks/humanpass`;
}

async function installExample(): Promise<void> {
  cpSync(EXAMPLE, project, {
    recursive: true,
    filter: (source) => !/(^|\/)(node_modules|[^/]+\.tgz)$/.test(path.relative(EXAMPLE, source)),
  });
  const packed = await packPackage(path.join(REPO_ROOT, "libs/events"), project);
  const manifest = JSON.parse(readFileSync(path.join(project, "package.json"), "utf8"));
  manifest.dependencies["@humanpass/events"] = `file:./${packed.filename}`;
  writeFileSync(path.join(project, "package.json"), JSON.stringify(manifest, null, 2));
  await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"], {
    cwd: project,
    env: outsideNpmEnv(),
    timeout: 300_000,
  });
}

/** Starts the example with plain node; resolves once it logs that it is subscribed. */
function startSubscriber(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["src/main.mjs"], {
    cwd: project,
    env: {
      ...outsideNpmEnv(),
      DATABASE_URL: ownDatabase.url,
      NATS_URL: nats.url,
      NATS_USER: "subscriber-acme",
      NATS_PASSWORD: acmePassword,
      DATABASE_SCHEMA: "acme",
      SUBSCRIBER_NAME: "acme",
      LOG_LEVEL: "info",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  subscriber = child;
  createInterface({ input: child.stderr! }).on("line", (line) => logs.push(`subscriber | ${line}`));
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).on("line", (line) => {
      logs.push(`subscriber | ${line}`);
      if (line.includes('"msg":"subscribed"')) resolve(child);
    });
    child.once("exit", (code) => reject(new Error(`the subscriber exited (${code}):\n${logs.join("\n")}`)));
  });
}

async function kill(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill(signal);
  await exited;
}

/** One direct-path claim by a paired agent: a fresh challenge signed by the agent, one human_verified. */
async function claim(agentIndex: number): Promise<void> {
  const agentAuth = stack.urls["agent-auth"];
  const challenge = (await fetch(`${agentAuth}/api/v1/challenge`).then((r) => r.json())) as {
    nonce: string;
    message: string;
  };
  const agent = privateKeyToAccount(stack.devnet.accounts[agentIndex]!.privateKey);
  const response = await fetch(`${agentAuth}/api/v1/claim`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      nonce: challenge.nonce,
      signature: await agent.signMessage({ message: challenge.message }),
    }),
  });
  expect(response.status).toBe(200);
}

/** The id of every human_verified event on the AGENT_AUTH stream, read back from JetStream. */
async function publishedIds(): Promise<string[]> {
  const consumer = await jetstream(nc).consumers.get("AGENT_AUTH", {
    deliver_policy: DeliverPolicy.All,
    filter_subjects: "agent_auth.human_verified",
  });
  const pending = (await consumer.info()).num_pending;
  const ids: string[] = [];
  if (pending === 0) return ids;
  for await (const m of await consumer.fetch({ max_messages: pending, expires: 5_000 })) {
    ids.push(m.json<{ id: string }>().id);
    if (ids.length === pending) break;
  }
  return ids;
}

const appliedIds = async () =>
  (
    await own.query<{ event_id: string }>("select event_id from human_verifications order by event_id")
  ).rows.map((r) => r.event_id);

/** `npx humanpass …` as a person runs it; its exit code, stdout and stderr. */
async function humanpass(args: string[], env: Record<string, string>) {
  return run(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? "", ...env } }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({
      code: e.code,
      stdout: e.stdout,
      stderr: e.stderr,
    }),
  );
}

beforeAll(async () => {
  project = mkdtempSync(path.join(tmpdir(), "humanpass-example-subscriber-"));
  natsStore = mkdtempSync(path.join(tmpdir(), "humanpass-make-up-nats-"));
  // docs/events.md, adding a subscriber to make up: the account and its password, then make up with both.
  const generated = await humanpass(["nats", "subscriber", "acme", "--streams", "AGENT_AUTH,PAYMENTS"], {});
  expect(generated.stdout).toContain("SUBSCRIBER_ACME: {");
  acmePassword = /NATS_SUBSCRIBER_ACME_PASSWORD=(\S+)/.exec(generated.stderr)![1]!;
  nats = await startLocalNats({
    port: await freePort(),
    storeDir: natsStore,
    subscribers: parseSubscriberGrants("acme=AGENT_AUTH,PAYMENTS"),
    env: { NATS_SUBSCRIBER_ACME_PASSWORD: acmePassword },
  });
  [stackDatabase, ownDatabase] = await Promise.all([
    createTestDatabase("subscriber_stack"),
    createTestDatabase("subscriber_own"),
  ]);
  own = createPool({ connectionString: ownDatabase.url, schema: "acme", max: 2 });
  const [started] = await Promise.all([
    startStack({
      databaseUrl: stackDatabase.url,
      natsUrl: nats.url,
      natsPasswords: nats.passwordOf,
      natsSubscribers: nats.subscribers,
      log: (service, line) => logs.push(`${service} | ${line}`),
      logLevel: "warn",
      // 400 requests from one address in a minute: more than the default limit allows.
      env: { "agent-auth": { RATE_LIMIT_MAX: "100000" } },
    }),
    installExample(),
  ]);
  stack = started;
  nc = await connect({ servers: nats.url, user: OPERATOR_USER, pass: nats.passwordOf(OPERATOR_USER) });
  const registered = await fetch(`${stack.urls.webhooks}/admin/v1/endpoints`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${DEV_WEBHOOKS_ADMIN_TOKEN}` },
    body: JSON.stringify({ url: await startReceiver(), eventTypes: ["agent_auth.human_verified"] }),
  });
  expect(registered.status).toBe(201);
  webhookSecret = ((await registered.json()) as { secret: string }).secret;
}, 600_000);

afterAll(async () => {
  if (subscriber) await kill(subscriber, "SIGTERM");
  if (receiver) await new Promise((resolve) => receiver.close(resolve));
  await own?.end();
  await stack?.stop();
  await nc?.close();
  await nats?.stop();
  await Promise.all([stackDatabase?.drop(), ownDatabase?.drop()]);
  for (const dir of [project, natsStore]) if (dir) await rm(dir, { recursive: true, force: true });
}, 180_000);

describe("the example subscriber, installed from the tarball", () => {
  it("keeps every human_verified of 200 claims in its own table exactly once across a SIGKILL in the middle", async () => {
    const agents = stack.seed.pairings.map((p) =>
      stack.devnet.accounts.findIndex(
        (a) => a.address.toLowerCase() === p.recipient.ethereumAddress.toLowerCase(),
      ),
    );
    expect(agents).not.toContain(-1);

    await startSubscriber();
    for (let i = 0; i < CLAIMS / 2; i++) await claim(agents[i % agents.length]!);
    // Killed while it may still be applying the first half: whatever it committed but did not ack comes again.
    await eventually(async () => (await appliedIds()).length > 0);
    await kill(subscriber!, "SIGKILL");
    for (let i = CLAIMS / 2; i < CLAIMS; i++) await claim(agents[i % agents.length]!);
    await startSubscriber();

    // The outbox relay publishes shortly after each claim's commit.
    const published = await eventually(async () => {
      const ids = await publishedIds();
      return ids.length >= CLAIMS ? ids : undefined;
    }, 60_000);
    expect(published).toHaveLength(CLAIMS);
    expect(new Set(published).size).toBe(CLAIMS);
    const applied = await eventually(async () => {
      const ids = await appliedIds();
      return ids.length >= CLAIMS ? ids : undefined;
    }, 60_000);
    expect(applied).toEqual([...published].sort());

    // Each human counted once per event: a redelivered event applied twice would show here.
    const humans = await own.query<{ human_id: string; verifications: number }>(
      "select human_id, verifications from verified_humans",
    );
    const perHuman = new Map<string, number>();
    for (const r of (await own.query<{ human_id: string }>("select human_id from human_verifications")).rows)
      perHuman.set(r.human_id, (perHuman.get(r.human_id) ?? 0) + 1);
    expect(new Map(humans.rows.map((r) => [r.human_id, r.verifications]))).toEqual(perHuman);
    expect(humans.rows.reduce((sum, r) => sum + r.verifications, 0)).toBe(CLAIMS);
    expect(humans.rows.map((r) => r.human_id).sort()).toEqual(
      [
        ...new Set(
          stack.humans
            .filter((h) => stack.seed.pairings.some((p) => p.attester.did === h.did))
            .map((h) => h.nullifier),
        ),
      ].sort(),
    );
    expect((await own.query("select * from dead_letters")).rows).toEqual([]);
  });

  it("the same claims reach a registered webhook endpoint, each signed and accepted once", async () => {
    const published = await publishedIds();
    expect(published).toHaveLength(CLAIMS);
    await eventually(() => hooks.accepted.size >= CLAIMS || undefined, 60_000);
    expect([...hooks.accepted.keys()].sort()).toEqual([...published].sort());
    expect([...hooks.accepted.values()].every((n) => n === 1)).toBe(true);
    expect(hooks.refused).toBe(0);
  });
});

describe("the CLI against make up's NATS", () => {
  it("follows the subscriber's copies as subscriber-acme, and refuses what neither it nor the topology user may do", async () => {
    const asAcme = { NATS_URL: nats.url, NATS_USER: "subscriber-acme", NATS_PASSWORD: acmePassword };
    const tail = await humanpass(
      ["events", "tail", "agent_auth.human_verified", "--since", "1d", "--count", "1", "--json"],
      asAcme,
    );
    expect(tail.code).toBe(0);
    expect(JSON.parse(tail.stdout).subject).toBe("agent_auth.human_verified");
    const asTopology = {
      NATS_URL: nats.url,
      NATS_USER: "topology",
      NATS_PASSWORD: nats.passwordOf("topology"),
    };
    const refused = {
      topologyAsSubscriber: await humanpass(["nats", "topology"], asAcme),
      tailAsTopology: await humanpass(["events", "tail", "--count", "1"], asTopology),
      updateAsTopology: await humanpass(["nats", "topology", "--update", "--confirm"], {
        ...asTopology,
        JETSTREAM_PAYMENTS_MAX_BYTES: "1KiB",
      }),
    };
    for (const [call, result] of Object.entries(refused))
      expect({
        call,
        failed: result.code !== 0,
        refused: /permissions violation/i.test(result.stderr),
      }).toEqual({
        call,
        failed: true,
        refused: true,
      });
  });
});
