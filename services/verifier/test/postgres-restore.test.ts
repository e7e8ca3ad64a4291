/**
 * The restore drill: a point-in-time recovery as docs/runbooks/postgres-restore.md has an operator do it
 * with CloudNativePG (a base backup plus the WAL archive, replayed into a fresh instance up to a chosen time), done
 * here with the installed Postgres on loopback. The primary archives every WAL segment to a folder (the object
 * store's stand-in) while the verifier records verifications; a base backup is taken mid-workload, the workload
 * goes on past the target time, and the backup restored into a new instance up to that time holds every
 * verification acknowledged before it and none sent after it. It prints the figures docs/restore.md quotes: how
 * long the restore took (RTO: copying the backup, replaying the WAL, promotion) and how close to the target it got.
 */
import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { createDb, type Kysely, migrateToLatest, sql } from "@humanpass/db";
import { eventually, type OwnPostgres, PostgresWorkDir, testTopology } from "@humanpass/testing";
import { afterAll, beforeAll, expect, it } from "vitest";
import { migrations } from "../src/db/migrations/index.ts";
import { SCHEMA, type VerifierDatabase } from "../src/db/schema.ts";
import { createSession } from "../src/db/sessions.ts";
import { recordVerification } from "../src/db/verifications.ts";
import type { AuthorizationRequest } from "../src/verification/token-verifier.ts";

const WORKERS = 4;
/** Acknowledged verifications before the base backup, between it and the target time, and after the target. */
const ACKED_PER_PHASE = 60;

let work: PostgresWorkDir;
let archive: string;
let primary: OwnPostgres;
let db: Kysely<VerifierDatabase>;
const restoredDbs: Kysely<VerifierDatabase>[] = [];

const connect = (instance: OwnPostgres) =>
  createDb<VerifierDatabase>({ connectionString: instance.url, schema: SCHEMA, max: WORKERS });

beforeAll(async () => {
  work = await PostgresWorkDir.create("pg-restore");
  archive = await work.folder("archive");
  primary = await work.initdb("primary", [
    "archive_mode = on",
    // Barman Cloud's `wal-archive` does this into the bucket: a segment already there is never overwritten.
    `archive_command = 'test ! -f ${archive}/%f && cp %p ${archive}/%f'`,
  ]);
  db = connect(primary);
  await migrateToLatest(db, { schema: SCHEMA, migrations });
}, 120_000);

afterAll(async () => {
  await db?.destroy();
  for (const restored of restoredDbs) await restored.destroy();
  await work?.remove();
}, 60_000);

it("restores a base backup and the archived WAL to a point in time: every verification acknowledged before it, none sent after", async () => {
  const topology = testTopology();
  const written: { nullifier: string; sentAt: number; ackedAt: number }[] = [];
  let running = true;
  const worker = async () => {
    while (running) {
      const nullifier = BigInt(`0x${randomBytes(16).toString("hex")}`).toString();
      const sentAt = Date.now();
      const now = new Date(sentAt);
      const { sessionId } = await createSession(db, {
        createdAt: now,
        expiresAt: new Date(sentAt + 3_600_000),
        request: (id) => ({ id: String(id) }) as unknown as AuthorizationRequest,
      });
      const outcome = await recordVerification(db, topology, {
        sessionId: BigInt(sessionId),
        proof: { nullifier, nullifierSessionId: "1", userDid: `did:example:${nullifier}`, userId: nullifier },
        now,
      });
      if (outcome === "recorded") written.push({ nullifier, sentAt, ackedAt: Date.now() });
    }
  };
  const workers = Array.from({ length: WORKERS }, worker);

  await eventually(() => written.length >= ACKED_PER_PHASE, 30_000);
  const backup = await work.basebackup("backup", primary, { wal: "none", settings: [] });
  const ackedAtBackup = written.length;
  await eventually(() => written.length >= ackedAtBackup + ACKED_PER_PHASE, 30_000);
  const target = Date.now();
  // Both sides of the target in one millisecond would make neither "before" nor "after" certain for a row.
  await sleep(2);
  const ackedAtTarget = written.length;
  await eventually(() => written.length >= ackedAtTarget + ACKED_PER_PHASE, 30_000);
  running = false;
  await Promise.all(workers);

  // The segment holding the last commits goes to the archive now rather than at archive_timeout.
  const { rows: switched } = await sql<{ segment: string }>`
    select pg_walfile_name(pg_switch_wal()) as segment`.execute(db);
  await eventually(async () => {
    const { rows } = await sql<{ last: string | null }>`
      select last_archived_wal as last from pg_stat_archiver`.execute(db);
    return (rows[0]?.last ?? "") >= switched[0]!.segment;
  }, 30_000);

  const restoreStarted = performance.now();
  const restored = await work.restore("restored", backup, [
    `restore_command = 'cp ${archive}/%f %p'`,
    // recovery_target_time takes Postgres's own timestamp form, not ISO 8601's `T…Z`.
    `recovery_target_time = '${new Date(target).toISOString().replace("T", " ").replace("Z", "+00")}'`,
    "recovery_target_action = 'promote'",
    // A restored instance writes a new timeline; it does not archive into the source's archive.
    "archive_mode = off",
  ]);
  await restored.start();
  const restoredDb = connect(restored);
  restoredDbs.push(restoredDb);
  await eventually(async () => {
    const { rows } = await sql<{ recovery: boolean }>`select pg_is_in_recovery() as recovery`.execute(
      restoredDb,
    );
    return rows[0]?.recovery === false;
  }, 60_000);
  const rtoMs = performance.now() - restoreStarted;

  const { rows } = await sql<{ nullifier: string }>`
    select nullifier from ${sql.table(`${SCHEMA}.nullifiers`)}`.execute(restoredDb);
  const present = new Set(rows.map((r) => r.nullifier));
  const before = written.filter((w) => w.ackedAt < target);
  const after = written.filter((w) => w.sentAt > target);
  const newestRestored = Math.max(...before.filter((w) => present.has(w.nullifier)).map((w) => w.ackedAt));
  console.info(
    `restore drill: ${written.length} verifications acknowledged (${ackedAtBackup} before the base backup); ` +
      `target ${new Date(target).toISOString()}: ${before.filter((w) => present.has(w.nullifier)).length} of the ` +
      `${before.length} acknowledged before it restored, ${after.filter((w) => present.has(w.nullifier)).length} ` +
      `of the ${after.length} sent after it; newest restored acknowledgement ${target - newestRestored} ms before ` +
      `the target; RTO ${(rtoMs / 1000).toFixed(2)} s (copy of the base backup, WAL replay, promotion)`,
  );
  expect(before.length).toBeGreaterThanOrEqual(ackedAtBackup + ACKED_PER_PHASE);
  expect(before.filter((w) => !present.has(w.nullifier))).toEqual([]);
  expect(after.length).toBeGreaterThanOrEqual(ACKED_PER_PHASE);
  expect(after.filter((w) => present.has(w.nullifier))).toEqual([]);
}, 120_000);
