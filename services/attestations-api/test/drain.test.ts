// The shutdown every service shares (libs/service runService): the service's own process, on the test Postgres and
// NATS, sent SIGTERM while it serves.
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { ensureStreams, jetstreamManager, type NatsConnection } from "@humanpass/event-bus";
import {
  connectTestNats,
  createTestDatabase,
  deleteTestStreams,
  eventually,
  freePort,
  REPO_ROOT,
  type TestDatabase,
  testNatsUrl,
  testTopology,
} from "@humanpass/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let database: TestDatabase;
let nats: NatsConnection;
const topology = testTopology();
let child: ChildProcess;
let exited: Promise<number | null>;
let url: string;

beforeAll(async () => {
  database = await createTestDatabase("att_drain");
  nats = await connectTestNats();
  await ensureStreams(await jetstreamManager(nats), topology, ["CHAIN", "VERIFIER"]);
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  child = spawn(
    process.execPath,
    ["--conditions=@humanpass/source", path.join(REPO_ROOT, "services/attestations-api/src/main.ts")],
    {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        DATABASE_URL: database.url,
        NATS_URL: testNatsUrl(),
        EVENTS_PREFIX: topology.prefix,
        HOST: "127.0.0.1",
        PORT: String(port),
        LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "warn",
        METRICS_ENABLED: "false",
        // Long enough that the requests below land inside it whatever the machine's load.
        SHUTDOWN_DRAIN_MS: "4000",
      },
      stdio: ["ignore", "ignore", "inherit"],
    },
  );
  exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
  await eventually(
    async () => {
      if (child.exitCode !== null) throw new Error(`attestations-api exited with ${child.exitCode}`);
      return (await fetch(`${url}/readyz`)).status === 200;
    },
    60_000,
    200,
  );
}, 90_000);

afterAll(async () => {
  if (child?.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await deleteTestStreams(nats, topology);
  await nats?.close();
  await database?.drop();
});

describe("SIGTERM", () => {
  it("takes the replica out of rotation (/readyz 503) while it still answers requests, then exits 0", async () => {
    expect((await fetch(`${url}/api/v1/schemas`)).status).toBe(200);
    child.kill("SIGTERM");
    const readyz = await eventually(
      async () => {
        const r = await fetch(`${url}/readyz`);
        return r.status === 503 ? r : undefined;
      },
      10_000,
      20,
    );
    expect(await readyz.json()).toMatchObject({ status: "unavailable", checks: { shutdown: "unavailable" } });
    // A request arriving during the drain, on a new connection, as a proxy that has not yet seen the 503 sends it.
    const during = await fetch(`${url}/api/v1/schemas`, { headers: { connection: "close" } });
    expect(during.status).toBe(200);
    expect(await during.json()).toMatchObject({ totalItems: 0 });
    expect(child.exitCode).toBeNull();
    expect(await exited).toBe(0);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  }, 60_000);
});
