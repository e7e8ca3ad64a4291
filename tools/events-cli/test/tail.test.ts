import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import {
  createCloudEvent,
  ensureStreams,
  jetstreamManager,
  type StreamName,
  subjectOf,
} from "@humanpass/event-bus";
import {
  connectTestNats,
  deleteTestStreams,
  eventually,
  REPO_ROOT,
  testNatsUrl,
  testTopology,
} from "@humanpass/testing";
import { jetstream } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const BIN = path.join(REPO_ROOT, "tools/events-cli/bin/humanpass.mjs");
const topology = testTopology();
let nc: NatsConnection;

const humanVerified = {
  humanId: "123456789",
  verifiedAt: "2026-11-22T00:00:00.000Z",
  humanDid: "did:iden3:billions:main:2VxnoiNqdMPyHMtUwAEzhnWqXGkEeJpAp4ntTkL8XT",
  resource: "http://127.0.0.1:4021/weather",
};

async function publish(stream: StreamName, type: string, data: unknown, source = "test") {
  const event = createCloudEvent({ source, type, data });
  await jetstream(nc).publish(subjectOf(topology, stream, type), JSON.stringify(event), { msgID: event.id });
  return event;
}

interface Run {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<number | null>;
}

function run(args: string[]): Run {
  const child = spawn(process.execPath, [BIN, "events", "tail", ...args, "--prefix", topology.prefix], {
    env: { ...process.env, NATS_URL: testNatsUrl(), EVENTS_PREFIX: "" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout!.on("data", (b) => {
    out += b;
  });
  child.stderr!.on("data", (b) => {
    err += b;
  });
  const exit = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, stdout: () => out, stderr: () => err, exit };
}

beforeAll(async () => {
  nc = await connectTestNats();
  await ensureStreams(await jetstreamManager(nc), topology, ["VERIFIER", "CHAIN", "AGENT_AUTH", "PAYMENTS"]);
});

afterAll(async () => {
  await deleteTestStreams(nc, topology);
  await nc.close();
});

describe("humanpass events tail", () => {
  it("prints new events of every stream as JSON lines and stops after --count", async () => {
    const old = await publish("PAYMENTS", "max_use_exceeded", { humanId: "1", maxUse: 1, resource: "old" });
    const tail = run(["--json", "--count", "3"]);
    await eventually(() => tail.stderr().includes("following"));

    const a = await publish(
      "VERIFIER",
      "uniqueness_verified",
      {
        sessionId: 7,
        nullifier: "42",
        nullifierSessionId: "1",
        userDid: "did:iden3:billions:test:x",
        userId: "9",
        verifiedAt: "2026-11-22T00:00:00.000Z",
      },
      "verifier",
    );
    const b = await publish("AGENT_AUTH", "human_verified", humanVerified, "agent-auth");
    const c = await publish(
      "PAYMENTS",
      "max_use_exceeded",
      { humanId: "123456789", maxUse: 2, resource: "http://127.0.0.1:4021/weather" },
      "payment-gateway",
    );

    expect(await tail.exit).toBe(0);
    const lines = tail
      .stdout()
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.event.id).sort()).toEqual([a.id, b.id, c.id].sort());
    expect(lines.map((l) => l.event.id)).not.toContain(old.id);
    const payment = lines.find((l) => l.event.id === c.id);
    expect(payment).toMatchObject({
      stream: `${topology.prefix.toUpperCase()}_PAYMENTS`,
      subject: `${topology.prefix}.payments.max_use_exceeded`,
      event: { type: "max_use_exceeded", source: "payment-gateway", data: { maxUse: 2 } },
    });
  });

  it("replays stored events matching a wildcard subject from an ISO --since, pretty-printed", async () => {
    const since = new Date();
    await publish("CHAIN", "blocks_reverted", {
      chainId: 45056,
      fromBlock: 5,
      toBlock: 6,
      attestationIds: [],
      revokedAttestationIds: [],
      schemaIds: [],
    });
    await publish(
      "AGENT_AUTH",
      "human_verified",
      { ...humanVerified, resource: "agent-auth-resource" },
      "agent-auth",
    );
    await publish(
      "PAYMENTS",
      "human_verified",
      { ...humanVerified, resource: "gateway-resource" },
      "payment-gateway",
    );

    const tail = run(["*.human_verified", "--since", since.toISOString(), "--count", "2"]);
    expect(await tail.exit).toBe(0);
    const out = tail.stdout();
    expect(out).toContain(`${topology.prefix}.agent_auth.human_verified`);
    expect(out).toContain(`${topology.prefix}.payments.human_verified`);
    expect(out).toMatch(/\n\s+resource\s+gateway-resource\n/);
    expect(out).toMatch(/\n\s+humanId\s+123456789\n/);
    expect(out).not.toContain("blocks_reverted");
    expect(tail.stderr()).toContain(`${topology.prefix}.agent_auth.human_verified, `);
    expect(tail.stderr()).toContain(
      `${topology.prefix}.payments.human_verified since ${since.toISOString()}`,
    );
  });

  it("refuses a malformed --since with a usage message and exit code 2", async () => {
    const tail = run(["--since", "yesterday"]);
    expect(await tail.exit).toBe(2);
    expect(tail.stderr()).toContain(
      '--since: "yesterday" is neither a duration like 10m nor an ISO 8601 time',
    );
  });
});
