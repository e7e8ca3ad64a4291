/**
 * A Postgres failover loses no acknowledged verification when a synchronous standby confirms every commit, as the
 * CloudNativePG cluster of deploy/k8s requires (`synchronous: any 1, dataDurability: required`): a primary and a
 * standby of the installed Postgres on loopback, the verifier recording verifications through the address it
 * uses (a proxy standing in for the cluster's `-rw` service), the primary killed mid-workload, the standby
 * promoted and the address moved to it. Every nullifier the verifier answered as recorded is on the new primary,
 * with its outbox event.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  appendFileSync,
  chmodSync,
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { createDb, type Kysely, migrateToLatest, sql } from "@humanpass/db";
import { eventually, freePort, TcpProxy, testTopology } from "@humanpass/testing";
import { afterAll, beforeAll, expect, it } from "vitest";
import { migrations } from "../src/db/migrations/index.ts";
import { SCHEMA, type VerifierDatabase } from "../src/db/schema.ts";
import { createSession } from "../src/db/sessions.ts";
import { recordVerification } from "../src/db/verifications.ts";
import type { AuthorizationRequest } from "../src/verification/token-verifier.ts";

const run = promisify(execFile);
const WORKERS = 8;
const ACKED_BEFORE_THE_KILL = 150;
const ACKED_AFTER_THE_SWITCH = 100;

/** The installed Postgres server binaries: on PATH, else Debian's layout (newest major first). */
function pgBin(name: string): string {
  const dirs = [
    ...(process.env.PATH ?? "").split(path.delimiter),
    ...(existsSync("/usr/lib/postgresql")
      ? readdirSync("/usr/lib/postgresql")
          .sort((a, b) => Number(b) - Number(a))
          .map((v) => `/usr/lib/postgresql/${v}/bin`)
      : []),
  ];
  const found = dirs.map((d) => path.join(d, name)).find((p) => existsSync(p));
  if (!found)
    throw new Error(
      `${name} not found: install the PostgreSQL server binaries (initdb, pg_ctl, pg_basebackup)`,
    );
  return found;
}

// initdb and postgres refuse to run as root; as root (CI), the cluster belongs to the `postgres` user.
const asRoot = process.getuid?.() === 0;
const pg = (name: string, args: string[]) =>
  asRoot ? run("runuser", ["-u", "postgres", "--", pgBin(name), ...args]) : run(pgBin(name), args);

let dir: string;
let primary: { data: string; port: number };
let standby: { data: string; port: number };
let proxy: TcpProxy;
let db: Kysely<VerifierDatabase>;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "pg-failover-"));
  chmodSync(dir, 0o755);
  if (asRoot) {
    const { stdout } = await run("id", ["-u", "postgres"]);
    chownSync(dir, Number(stdout.trim()), -1);
  }
  primary = { data: path.join(dir, "primary"), port: await freePort() };
  standby = { data: path.join(dir, "standby"), port: await freePort() };
  await pg("initdb", ["-D", primary.data, "-U", "postgres", "--auth=trust", "--no-sync"]);
  appendFileSync(
    path.join(primary.data, "postgresql.conf"),
    [
      `port = ${primary.port}`,
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${dir}'`,
      // A commit returns once the standby has flushed it: CloudNativePG's `method: any, number: 1`.
      "synchronous_standby_names = 'ANY 1 (standby)'",
      "",
    ].join("\n"),
  );
  await pg("pg_ctl", ["-D", primary.data, "-l", path.join(dir, "primary.log"), "-w", "start"]);
  await pg("pg_basebackup", [
    "-h",
    "127.0.0.1",
    "-p",
    String(primary.port),
    "-U",
    "postgres",
    "-D",
    standby.data,
    "-R",
    "-X",
    "stream",
  ]);
  appendFileSync(
    path.join(standby.data, "postgresql.auto.conf"),
    [
      `port = ${standby.port}`,
      `primary_conninfo = 'host=127.0.0.1 port=${primary.port} user=postgres application_name=standby'`,
      // Promoted, it runs alone until the operator attaches a new standby.
      "synchronous_standby_names = ''",
      "",
    ].join("\n"),
  );
  await pg("pg_ctl", ["-D", standby.data, "-l", path.join(dir, "standby.log"), "-w", "start"]);
  proxy = await new TcpProxy("127.0.0.1", primary.port).start();
  db = createDb<VerifierDatabase>({
    connectionString: `postgres://postgres@127.0.0.1:${proxy.port}/postgres`,
    schema: SCHEMA,
    max: WORKERS,
    queryTimeoutMs: 5_000,
    // Connections the kill dropped while idle: expected here, and counted through the workers' failures.
    onError: () => undefined,
  });
  await eventually(async () => {
    const { rows } = await sql<{ sync_state: string }>`
      select sync_state from pg_stat_replication where application_name = 'standby'`.execute(db);
    return rows[0]?.sync_state === "quorum";
  }, 30_000);
  await migrateToLatest(db, { schema: SCHEMA, migrations });
}, 120_000);

afterAll(async () => {
  await db?.destroy();
  await proxy?.stop();
  for (const data of [primary?.data, standby?.data])
    if (data && existsSync(path.join(data, "postmaster.pid")))
      await pg("pg_ctl", ["-D", data, "-m", "immediate", "stop"]).catch(() => undefined);
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 60_000);

it("keeps every verification it acknowledged, and its outbox event, through the loss of the primary", async () => {
  const topology = testTopology();
  const acknowledged: string[] = [];
  let failed = 0;
  let running = true;
  const worker = async () => {
    while (running) {
      const nullifier = BigInt(`0x${randomBytes(16).toString("hex")}`).toString();
      try {
        const now = new Date();
        const { sessionId } = await createSession(db, {
          createdAt: now,
          expiresAt: new Date(now.getTime() + 3_600_000),
          // The stored request is not read back here.
          request: (id) => ({ id: String(id) }) as unknown as AuthorizationRequest,
        });
        const outcome = await recordVerification(db, topology, {
          sessionId: BigInt(sessionId),
          proof: {
            nullifier,
            nullifierSessionId: "1",
            userDid: `did:example:${nullifier}`,
            userId: nullifier,
          },
          now,
        });
        if (outcome === "recorded") acknowledged.push(nullifier);
      } catch {
        // The connection died under it: not acknowledged, so either outcome is allowed.
        failed++;
        await sleep(50);
      }
    }
  };
  const workers = Array.from({ length: WORKERS }, worker);

  await eventually(() => acknowledged.length >= ACKED_BEFORE_THE_KILL, 60_000);
  const postmaster = Number(readFileSync(path.join(primary.data, "postmaster.pid"), "utf8").split("\n")[0]);
  process.kill(postmaster, "SIGKILL");
  const ackedAtKill = acknowledged.length;
  await pg("pg_ctl", ["-D", standby.data, "-w", "promote"]);
  proxy.retarget("127.0.0.1", standby.port);
  await eventually(() => acknowledged.length >= ackedAtKill + ACKED_AFTER_THE_SWITCH, 60_000);
  running = false;
  await Promise.all(workers);

  const { rows } = await sql<{ nullifiers: number; events: number; recovery: boolean }>`
    select
      (select count(*)::int from ${sql.table(`${SCHEMA}.nullifiers`)} where nullifier = any(${acknowledged})) as nullifiers,
      (select count(*)::int from ${sql.table(`${SCHEMA}.outbox`)}
        where event->'data'->>'nullifier' = any(${acknowledged})) as events,
      pg_is_in_recovery() as recovery`.execute(db);
  expect(rows[0]).toEqual({ nullifiers: acknowledged.length, events: acknowledged.length, recovery: false });
  expect(failed).toBeGreaterThan(0);
}, 180_000);
