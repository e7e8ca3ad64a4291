import { createPool, kyselyOn } from "@humanpass/db";
import type { RunningConsumer } from "@humanpass/event-bus";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCHEMA } from "../src/config.ts";
import { startReadModelConsumers } from "../src/events/consumers.ts";
import {
  api,
  attestationRecorded,
  attestationRevoked,
  getJson,
  type Harness,
  logger,
  party,
  schemaRegistered,
  startHarness,
} from "./support/harness.ts";

let h: Harness;
let secondReplica: { consumers: RunningConsumer[]; close(): Promise<void> };

beforeAll(async () => {
  h = await startHarness("att_replicas");
  // A second replica: its own pool and consumers on the same durables, as `docker compose --scale` runs it.
  const pool = createPool({ connectionString: h.database.url, schema: SCHEMA, max: 4 });
  const consumers = await startReadModelConsumers({
    db: kyselyOn(pool),
    nats: h.nats,
    topology: h.topology,
    logger,
  });
  secondReplica = {
    consumers,
    async close() {
      for (const c of consumers) await c.stop();
      await pool.end();
    },
  };
});
afterAll(async () => {
  await secondReplica?.close();
  await h?.close();
});

describe("two replicas sharing the CHAIN durable", () => {
  it("apply every revocation, whichever replica gets the attestation and which its revocation", async () => {
    const s = schemaRegistered();
    await h.publish("CHAIN", "schema_registered", s);
    const attestations = Array.from({ length: 400 }, () => attestationRecorded(s.schemaId, party(), party()));
    // Published at once, so that both replicas hold batches in flight together.
    const ids = (
      await Promise.all(
        attestations.map((a) =>
          Promise.all([
            h.publishOnly("CHAIN", "attestation_recorded", a),
            h.publishOnly("CHAIN", "attestation_revoked", attestationRevoked(a.attestationId, party())),
          ]),
        ),
      )
    ).flat();
    await h.waitApplied(ids);
    const { body } = await getJson(h.app, api(`/attestations?schemaId=${s.schemaId}&page_size=100`));
    expect(body.totalItems).toBe(0);
    const unrevoked = await h.db
      .selectFrom("attestations")
      .select("id")
      .where("schema_id", "=", s.schemaId)
      .where("revoked", "=", false)
      .execute();
    expect(unrevoked).toEqual([]);
    // Both replicas took part, or the test proved nothing about them.
    expect(secondReplica.consumers[0].stats.applied).toBeGreaterThan(0);
    expect(h.consumers[0].stats.applied).toBeGreaterThan(0);
  });
});
