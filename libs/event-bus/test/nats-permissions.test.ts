import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { eventually, freePort, REPO_ROOT } from "@humanpass/testing";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createCloudEvent,
  DEFAULT_TOPOLOGY,
  ensureStreams,
  STREAMS,
  type StreamName,
  subjectOf,
} from "../src/index.ts";

/** A NATS server of this test's own, with the users file the deployments load. */
const USERS_FILE = path.join(REPO_ROOT, "deploy/k8s/base/nats/users.conf");
const USERS = [
  "verifier",
  "chain-indexer",
  "agent-auth",
  "payment-gateway",
  "attestations-api",
  "webhooks",
  "operator",
];
const passwordOf = (user: string) => `test-${user}`;
let server: ChildProcess;
let url: string;
let storeDir: string;
const open: NatsConnection[] = [];

async function connectAs(user: string): Promise<NatsConnection> {
  const nc = await connect({ servers: url, user, pass: passwordOf(user) });
  open.push(nc);
  return nc;
}

beforeAll(async () => {
  const port = await freePort();
  url = `nats://127.0.0.1:${port}`;
  storeDir = mkdtempSync(path.join(tmpdir(), "nats-permissions-"));
  const env: Record<string, string> = { ...process.env } as Record<string, string>;
  for (const user of USERS) env[`NATS_${user.toUpperCase().replace(/-/g, "_")}_PASSWORD`] = passwordOf(user);
  server = spawn(
    "nats-server",
    ["-js", "-sd", storeDir, "-a", "127.0.0.1", "-p", String(port), "-c", USERS_FILE],
    { env, stdio: "ignore" },
  );
  await eventually(() => connectAs("operator").then(() => true), 10_000, 100);
  await ensureStreams(
    await jetstreamManager(open[0]),
    DEFAULT_TOPOLOGY,
    Object.keys(STREAMS) as StreamName[],
  );
});

afterAll(async () => {
  await Promise.all(open.map((nc) => nc.close()));
  server?.kill();
  rmSync(storeDir, { recursive: true, force: true });
});

function event(stream: StreamName) {
  const type = stream === "CHAIN" ? "blocks_reverted" : "human_not_registered";
  const data =
    stream === "CHAIN"
      ? { chainId: 1, fromBlock: 1, toBlock: 1, attestationIds: [], revokedAttestationIds: [], schemaIds: [] }
      : { did: "did:x", resource: "r" };
  return {
    subject: subjectOf(DEFAULT_TOPOLOGY, stream, type),
    payload: JSON.stringify(createCloudEvent({ source: STREAMS[stream].source, type, data })),
  };
}

describe("NATS users of the deployments", () => {
  it("lets each service publish events on its own stream and on no other", async () => {
    const owners: Array<[string, StreamName | undefined]> = [
      ["verifier", undefined],
      ["chain-indexer", "CHAIN"],
      ["agent-auth", "AGENT_AUTH"],
      ["payment-gateway", "PAYMENTS"],
      ["attestations-api", undefined],
      ["webhooks", undefined],
    ];
    for (const [user, own] of owners) {
      const js = jetstream(await connectAs(user));
      for (const stream of ["CHAIN", "AGENT_AUTH", "PAYMENTS"] as StreamName[]) {
        const { subject, payload } = event(stream);
        const published = await js.publish(subject, payload, { timeout: 1_000 }).then(
          () => "published",
          (e: Error) => e.message,
        );
        expect({ user, subject, published }).toEqual({
          user,
          subject,
          published: stream === own ? "published" : expect.stringMatching(/permission|timeout|TIMEOUT/i),
        });
      }
    }
  });

  it.each(["attestations-api", "webhooks"])(
    "lets the consumer-only service %s read any stream and store dead letters",
    async (user) => {
      const operatorJs = jetstream(await connectAs("operator"));
      const { subject, payload } = event("CHAIN");
      await operatorJs.publish(subject, payload);
      const nc = await connectAs(user);
      const jsm = await jetstreamManager(nc);
      const durable = `perm_test_${user.replace(/-/g, "_")}`;
      await jsm.consumers.add("CHAIN", {
        durable_name: durable,
        ack_policy: "explicit" as never,
        deliver_policy: "last" as never,
      });
      const consumer = await jetstream(nc).consumers.get("CHAIN", durable);
      const msg = await consumer.next({ expires: 2_000 });
      expect(msg?.subject).toBe(subject);
      expect(await msg?.ackAck()).toBe(true);
      await jsm.streams.add({ name: "DEAD_LETTERS", subjects: ["dead_letters.>"] });
      await jetstream(nc).publish(`dead_letters.${durable}`, "{}");
    },
  );
});
