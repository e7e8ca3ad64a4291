// The shutdown every service shares (libs/service runService): the service's own process, on the test Postgres and
// NATS, sent SIGTERM while it serves.
import { ensureStreams, jetstreamManager, type NatsConnection } from "@humanpass/event-bus";
import {
  connectTestNats,
  createTestDatabase,
  deleteTestStreams,
  eventually,
  type ServiceProcess,
  startServiceMain,
  type TestDatabase,
  testTopology,
} from "@humanpass/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let database: TestDatabase;
let nats: NatsConnection;
const topology = testTopology();
let service: ServiceProcess;
let url: string;

beforeAll(async () => {
  database = await createTestDatabase("att_drain");
  nats = await connectTestNats();
  await ensureStreams(await jetstreamManager(nats), topology, ["CHAIN", "VERIFIER"]);
  service = await startServiceMain("attestations-api", {
    DATABASE_URL: database.url,
    EVENTS_PREFIX: topology.prefix,
    METRICS_ENABLED: "false",
    // Long enough that the requests below land inside it whatever the machine's load.
    SHUTDOWN_DRAIN_MS: "4000",
  });
  url = service.url;
}, 90_000);

afterAll(async () => {
  service?.child.kill("SIGKILL");
  await deleteTestStreams(nats, topology);
  await nats?.close();
  await database?.drop();
});

describe("SIGTERM", () => {
  it("takes the replica out of rotation (/readyz 503) while it still answers requests, then exits 0", async () => {
    expect((await fetch(`${url}/api/v1/schemas`)).status).toBe(200);
    service.child.kill("SIGTERM");
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
    expect(service.child.exitCode).toBeNull();
    expect(await service.exited).toBe(0);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  }, 60_000);
});
