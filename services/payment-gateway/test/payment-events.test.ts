import { createPool, type Kysely, kyselyOn, migrateToLatest, type Pool, sql } from "@humanpass/db";
import { startTelemetry } from "@humanpass/telemetry";
import { createTestDatabase, type TestDatabase, testTopology } from "@humanpass/testing";
import { trace } from "@opentelemetry/api";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace-base";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCHEMA } from "../src/config.ts";
import { migrations } from "../src/db/migrations/index.ts";
import { outboxPaymentEvents } from "../src/events/payment-events.ts";

const telemetry = startTelemetry({
  serviceName: "gateway-events-test",
  spanExporter: new InMemorySpanExporter(),
});
let database: TestDatabase;
let pool: Pool;
let db: Kysely<any>;

beforeAll(async () => {
  database = await createTestDatabase("gw_events");
  pool = createPool({ connectionString: database.url, schema: SCHEMA, max: 4 });
  db = kyselyOn(pool);
  await migrateToLatest(db, { schema: SCHEMA, migrations });
});

afterAll(async () => {
  await db?.destroy();
  await database?.drop();
  await telemetry.shutdown();
});

const settled = (n: number) => ({
  resource: `http://gw/r/${n}`,
  network: "eip155:45056",
  payer: "0x000000000000000000000000000000000000bEEF",
  payTo: "0x000000000000000000000000000000000000dEaD",
  amount: "1000",
  asset: "0xCf7Ed3AccA5a467e9e704C703E8D87F634fB0Fc9",
  transaction: `0x${n.toString(16).padStart(64, "0")}`,
});

describe("the gateway's settlement events", () => {
  it("are committed when emit resolves, requests settling together share commits, each keeps its request's trace", async () => {
    let wakes = 0;
    const events = outboxPaymentEvents(db, testTopology(), pino({ level: "silent" }), () => wakes++);
    const traces = new Map<string, string>();
    await Promise.all(
      Array.from({ length: 40 }, (_, n) =>
        trace.getTracer("test").startActiveSpan(`request ${n}`, async (span) => {
          traces.set(`http://gw/r/${n}`, span.spanContext().traceId);
          await events.emit("payment_settled", settled(n));
          // Resolved: the row is committed, so another connection sees it.
          const { rows } = await sql<{ n: number }>`
            select count(*)::int as n from outbox where event->'data'->>'resource' = ${`http://gw/r/${n}`}`.execute(
            db,
          );
          expect(rows[0]?.n).toBe(1);
          span.end();
        }),
      ),
    );
    const { rows } = await sql<{ resource: string; traceparent: string; tx: string }>`
      select event->'data'->>'resource' as resource, trace->>'traceparent' as traceparent, xmin::text as tx
      from outbox`.execute(db);
    expect(rows).toHaveLength(40);
    for (const row of rows) expect(row.traceparent.split("-")[1]).toBe(traces.get(row.resource));
    const commits = new Set(rows.map((r) => r.tx)).size;
    expect(commits).toBeLessThan(40);
    expect(wakes).toBe(commits);
  });
});
