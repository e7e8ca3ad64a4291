import { randomUUID } from "node:crypto";
import { createPool } from "@humanpass/db";
import { jetstreamManager } from "@humanpass/event-bus";
import { connectTestNats, createTestDatabase, deleteTestStreams, testTopology } from "@humanpass/testing";
import { headers } from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";
import { events, recoveries, SCHEMAS, serverErrors } from "./invariants.ts";
import type { Response } from "./workload.ts";

const claim = (status: number, at: number, ms: number, service = "agent-auth"): Response => ({
  service,
  method: "POST",
  path: "/api/v1/claim",
  status,
  at,
  ms,
});
const ok = claim(200, 0, 5);
const kill = { name: "agent-auth", from: 1_000, to: 1_040 };
const outage = { name: "postgres restart", from: 5_000, to: 9_000 };

describe("serverErrors", () => {
  it("excuses a 502 for a request in flight to the service while one of its replicas was killed", () => {
    const sentBefore = claim(502, 990, 30);
    const sentDuring = claim(502, 1_020, 5);
    const verdict = serverErrors([ok, sentBefore, sentDuring], [], [kill]);
    expect(verdict.ok).toBe(true);
    expect(verdict.detail).toBe(
      "3 responses, 0 bad; in flight at a kill: agent-auth POST /api/v1/claim 502 ×2",
    );
  });

  it("refuses a 502 sent after the kill returned, answered before it, or for another service", () => {
    const after = claim(502, 1_041, 5);
    const before = claim(502, 900, 99);
    const elsewhere = claim(502, 990, 30, "payment-gateway");
    const verdict = serverErrors([ok, after, before, elsewhere], [], [kill]);
    expect(verdict.ok).toBe(false);
    expect(verdict.detail).toBe(
      "4 responses, 3 bad: agent-auth POST /api/v1/claim 502 ×2, payment-gateway POST /api/v1/claim 502 ×1",
    );
  });

  it("excuses a 503 only inside a declared outage, and nothing else at a kill", () => {
    expect(serverErrors([ok, claim(503, 6_000, 5)], [outage], []).ok).toBe(true);
    expect(serverErrors([ok, claim(503, 9_001, 5)], [outage], []).ok).toBe(false);
    expect(serverErrors([ok, claim(500, 1_020, 5)], [], [kill]).ok).toBe(false);
    expect(serverErrors([ok, claim(503, 1_020, 5)], [], [kill]).ok).toBe(false);
  });

  it("excuses a declared response with the status declared for it, and no other with the same request", () => {
    const callback: Response = { ...claim(500, 2_000, 300, "verifier"), path: "/api/callback" };
    const another: Response = { ...callback, at: 2_400 };
    const declared = [{ response: callback, status: 500, why: "token not verified (spec 1)" }];
    const verdict = serverErrors([ok, callback], [], [], declared);
    expect(verdict.ok).toBe(true);
    expect(verdict.detail).toBe(
      "2 responses, 0 bad; declared: verifier POST /api/callback 500 ×1 (token not verified (spec 1))",
    );
    expect(serverErrors([ok, callback, another], [], [], declared).detail).toMatch(
      /^3 responses, 1 bad: verifier POST \/api\/callback 500 ×1;/,
    );
    expect(
      serverErrors([ok, callback], [], [], [{ response: callback, status: 503, why: "not what it got" }]).ok,
    ).toBe(false);
  });

  it("counts a request that got no response at all, and holds nothing over no responses", () => {
    expect(serverErrors([ok, claim(0, 1_020, 5)], [outage], [kill]).detail).toBe(
      "2 responses, 1 bad: agent-auth POST /api/v1/claim 0 ×1",
    );
    expect(serverErrors([], [], []).ok).toBe(false);
  });
});

describe("recoveries", () => {
  it("fails on a recovery over the bound or never reached, naming the services it waited on", () => {
    const verdict = recoveries(
      [
        { fault: "kill agent-auth", seconds: 6.2, last: ["agent-auth"] },
        { fault: "kill verifier", seconds: 31.4, last: ["verifier"] },
        { fault: "Postgres restart", seconds: undefined, last: ["attestations-api", "payment-gateway"] },
      ],
      30,
    );
    expect(verdict.ok).toBe(false);
    expect(verdict.detail).toBe(
      "kill agent-auth 6.2 s; kill verifier 31.4 s (waiting on verifier); Postgres restart never (waiting on attestations-api, payment-gateway)",
    );
  });

  it("holds when every fault recovered within the bound, and not over no faults", () => {
    expect(recoveries([{ fault: "kill verifier", seconds: 8.3, last: ["verifier"] }], 30).ok).toBe(true);
    expect(recoveries([], 30).ok).toBe(false);
  });
});

describe("events, on a NATS server other stacks share", () => {
  it("reads only the streams of the prefix it is given", async () => {
    const database = await createTestDatabase("invariants");
    const nc = await connectTestNats();
    const [ours, theirs] = [testTopology(), testTopology()];
    const pool = createPool({ connectionString: database.url, schema: "public", max: 1 });
    try {
      for (const schema of SCHEMAS)
        await pool.query(
          `create schema "${schema}"; create table "${schema}".outbox (id uuid primary key, published_at timestamptz)`,
        );
      const id = randomUUID();
      await pool.query(`insert into verifier.outbox values ($1, now())`, [id]);
      // Our outbox row once on our stream; on two streams of another stack under the same message id.
      const jsm = await jetstreamManager(nc);
      const streams = [`${ours.prefix}:VERIFIER`, `${theirs.prefix}:VERIFIER`, `${theirs.prefix}:CHAIN`];
      for (const stream of streams) {
        const [prefix, name] = stream.split(":") as [string, string];
        const subject = `${prefix}.${name.toLowerCase()}`;
        await jsm.streams.add({ name: `${prefix.toUpperCase()}_${name}`, subjects: [`${subject}.>`] });
        const h = headers();
        h.set("Nats-Msg-Id", id);
        await nc.request(`${subject}.event`, JSON.stringify({ id: randomUUID() }), {
          headers: h,
          timeout: 5_000,
        });
      }
      const published = async (prefix: string) => (await events(database.url, nc, { prefix }))[0]!;
      expect(await published(ours.prefix)).toMatchObject({
        ok: true,
        detail: expect.stringMatching(/^1 outbox rows, 1 stream messages, 0 unpublished, 0 not exactly once/),
      });
      expect(await published(theirs.prefix)).toMatchObject({
        ok: false,
        detail: expect.stringMatching(/^1 outbox rows, 2 stream messages, 0 unpublished, 1 not exactly once/),
      });
    } finally {
      await pool.end();
      for (const t of [ours, theirs]) await deleteTestStreams(nc, t);
      await nc.close();
      await database.drop();
    }
  });
});
