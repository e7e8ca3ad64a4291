// Performance check of the attestations API's read plans (`make perf-check`; `make bench` runs it first): what the
// benchmark's figures rest on, asserted on Postgres' own views rather than in the contract tests, which assert only
// what a caller sees. Exits 1 when a check fails.
//   - the ownership lookup repeated on one connection runs its cached generic plan, never planned again
//     (plan_cache_mode = force_generic_plan in the service's session settings);
//   - that plan finds the agent's address by an index condition on the `collate "C"` columns (migration 0006): a
//     collation mismatch between statement and index would leave it a filter over a scan. (Which of the indexes
//     starting with `lower(recipient_address)` or `schema_id` it takes depends on the data's statistics.)
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { buildApp, migrations, readSessionSettings, SCHEMA } from "@humanpass/attestations-api";
import { createDb, createPool, dropDatabase, ensureDatabase, migrateToLatest, sql } from "@humanpass/db";
import pino from "pino";

const OWNERSHIP = `0x${"a1".repeat(32)}`;
const REGISTRY = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
/** The name the read path prepares the ownership lookup's page under (src/db/attestation-pages.ts). */
const LOOKUP_STATEMENT = "attestation-page/all/s,ra";
const LOOKUPS = 12;

const url = new URL(process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres");
url.pathname = `/perf_attestations_plans_${randomBytes(4).toString("hex")}`;
const databaseUrl = url.toString();
const agent = (n: number) => `0x${String(5_000_000_000 + n).padStart(40, "0")}`;

async function load(): Promise<void> {
  await ensureDatabase(databaseUrl);
  const db = createDb<any>({ connectionString: databaseUrl, schema: SCHEMA, max: 1 });
  try {
    await migrateToLatest(db, { schema: SCHEMA, migrations });
    await sql`
      insert into schemas (id, name, schema_raw, resolver, revocable, creator, creator_iden3_id, registry,
                           block_timestamp, chain_id, block_number, log_index, tx_hash)
      values (${OWNERSHIP}, 'AgentOwnership', 'bytes data', ${`0x${"0".repeat(40)}`}, true, ${REGISTRY}, '0',
              ${REGISTRY}, 1700000000, 45056, 1, 0, ${`0x${"01".repeat(32)}`})`.execute(db);
    await sql`
      insert into attestations (id, schema_id, creation_time, expiration_time, revocable, revoked, revocation_time,
        attester_did, attester_iden3_id, attester_address, recipient_did, recipient_iden3_id, recipient_address,
        ref_id, data, registry, chain_id, block_number, log_index, tx_hash)
      select '0x' || md5('a' || g) || md5('b' || g), ${OWNERSHIP}, 1700000000 + g, 0, true, false, 0,
             'did:iden3:billions:main:human' || g, (10000000 + g)::text, '0x' || lpad(g::text, 40, '0'),
             'did:iden3:billions:main:agent' || g, (1000000000 + g)::text,
             '0x' || lpad((5000000000 + g)::text, 40, '0'),
             ${`0x${"0".repeat(64)}`}, '0x', ${REGISTRY}, 45056, 1000 + g, 0, '0x' || md5('t' || g) || md5('u' || g)
      from generate_series(1, 5000) g`.execute(db);
    await sql`analyze`.execute(db);
  } finally {
    await db.destroy();
  }
}

async function check(): Promise<void> {
  // One connection, so the statement the app prepares and the views read below are of the same session.
  const pool = createPool({
    connectionString: databaseUrl,
    schema: SCHEMA,
    max: 1,
    settings: readSessionSettings(),
  });
  const app = await buildApp({ pool, logger: pino({ level: "silent" }), rateLimit: false });
  try {
    // Priced out before the statement is first planned: a plan that still scans the table means the index cannot
    // serve the comparison.
    await pool.query("set enable_seqscan = off");
    for (let i = 1; i <= LOOKUPS; i++) {
      const res = await app.inject({
        method: "GET",
        url: `/api/v1/attestations?schemaId=${OWNERSHIP}&recipientEthereumAddress=${agent(i)}`,
      });
      assert.equal(res.statusCode, 200);
      assert.equal(res.json().totalItems, 1);
    }
    const { rows } = await pool.query<{ generic_plans: string; custom_plans: string }>(
      "select generic_plans, custom_plans from pg_prepared_statements where name = $1",
      [LOOKUP_STATEMENT],
    );
    assert.deepEqual(rows, [{ generic_plans: String(LOOKUPS), custom_plans: "0" }], "generic plans only");
    report(`ownership lookup: ${LOOKUPS} executions, ${rows[0]!.generic_plans} on the cached generic plan`);
    // EXPLAIN EXECUTE takes no bound parameters; the values are this file's own.
    const { rows: plan } = await pool.query<{ "QUERY PLAN": string }>(
      `explain execute "${LOOKUP_STATEMENT}"(array['${OWNERSHIP}'], array['${agent(1)}'], array[11], array[0])`,
    );
    const text = plan.map((r) => r["QUERY PLAN"]).join("\n");
    const index =
      /Index Scan using (attestations_\w+) on attestations a[^\n]*\n\s+Index Cond: \([^\n]*lower\(recipient_address\) = /.exec(
        text,
      );
    assert.ok(index, `an index condition on lower(recipient_address), in:\n${text}`);
    assert.doesNotMatch(text, /Seq Scan on attestations/, `no sequential scan, in:\n${text}`);
    report(`ownership lookup: index condition on lower(recipient_address) (${index[1]})`);
  } finally {
    await app.close();
    await pool.end();
  }
}

function report(line: string): void {
  process.stdout.write(`  ok  ${line}\n`);
}

try {
  await load();
  await check();
} catch (e) {
  process.stdout.write(`  FAILED  ${(e as Error).message}\n`);
  process.exitCode = 1;
} finally {
  await dropDatabase(databaseUrl);
}
