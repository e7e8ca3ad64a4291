import { createPool, sql } from "@humanpass/db";
import type { HttpApp } from "@humanpass/http";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../src/app.ts";
import { SCHEMA } from "../src/config.ts";
import { readSessionSettings } from "../src/db/session-settings.ts";
import { getJson, type Harness, logger, schemaRegistered, startHarness } from "./support/harness.ts";

let h: Harness;
let pool: pg.Pool;
let app: HttpApp;
const schema = schemaRegistered();

beforeAll(async () => {
  h = await startHarness("att_read_timeout");
  await h.publish("CHAIN", "schema_registered", schema);
  // Enough rows that skipping to the last page takes Postgres well over a millisecond; the totals are not what
  // this file looks at, so their triggers stay off for the load.
  await sql`alter table attestations disable trigger user`.execute(h.db);
  await sql`
    insert into attestations (id, schema_id, creation_time, expiration_time, revocable, revoked, revocation_time,
      attester_did, attester_iden3_id, attester_address, recipient_did, recipient_iden3_id, recipient_address,
      ref_id, data, registry, chain_id, block_number, log_index, tx_hash)
    select '0x' || md5('a' || g) || md5('b' || g), ${schema.schemaId.toLowerCase()}, 1700000000, 0, false, false, 0,
      'did:iden3:billions:main:h' || g, g::text, '0x' || lpad(g::text, 40, '0'),
      'did:iden3:billions:main:r' || g, g::text, '0x' || lpad(g::text, 40, '0'),
      ${`0x${"0".repeat(64)}`}, '0x', '0x5FbDB2315678afecb367f032d93F642f64180aa3', 45056, 1000 + g, 0, '0x'
    from generate_series(1, 50000) g`.execute(h.db);
  await sql`analyze attestations`.execute(h.db);
  pool = createPool({
    connectionString: h.database.url,
    schema: SCHEMA,
    max: 2,
    settings: readSessionSettings(1),
  });
  app = await buildApp({ pool, logger, rateLimit: false });
  await app.ready();
});
afterAll(async () => {
  await app?.close();
  await pool?.end();
  await h?.close();
});

describe("a read that runs past READ_TIMEOUT_MS", () => {
  it("is cancelled and answered 503 read_timeout, and the service keeps answering", async () => {
    const { status, body } = await getJson(app, "/api/v1/attestations?page_size=100&page_number=500");
    expect(status).toBe(503);
    expect(body).toEqual({ error: "read_timeout", message: expect.stringMatching(/earlier page/) });
    expect((await getJson(app, "/api/v1/healthCheck")).status).toBe(200);
    // The same page through the harness's pool, with the default timeout, is served.
    const served = await getJson(h.app, "/api/v1/attestations?page_size=100&page_number=500");
    expect(served.status).toBe(200);
    expect(served.body.data).toHaveLength(100);
  });
});
