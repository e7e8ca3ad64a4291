/**
 * A Postgres failover loses no acknowledged verification and no acknowledged payment when a synchronous standby
 * confirms every commit, as the CloudNativePG cluster of deploy/k8s requires (`synchronous: any 1,
 * dataDurability: required, failoverQuorum`): a primary and a standby of the installed Postgres on loopback, the
 * verifier recording verifications and the payment gateway claiming paid requests' authorizations through the
 * address they use (a proxy standing in for the cluster's `-rw` service), the primary killed mid-workload, the
 * standby promoted and the address moved to it. Every nullifier the verifier answered as recorded is on the new
 * primary with its outbox event, and every payment the gateway answered as claimed.
 *
 * Whether an asynchronous standby loses a commit depends on timing, so losing nothing proves nothing by itself:
 * before the kill the test requires `pg_stat_replication` to show the standby synchronous, and an asynchronous
 * set-up fails there on every run.
 */
import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { createPool, type Kysely, kyselyOn, migrateToLatest, type Pool, sql } from "@humanpass/db";
import {
  GatewayHumanProofStore,
  SCHEMA as PAYMENT_GATEWAY_SCHEMA,
  type PaymentGatewayDatabase,
  migrations as paymentGatewayMigrations,
} from "@humanpass/payment-gateway";
import { createLogger } from "@humanpass/telemetry";
import {
  eventually,
  type OwnPostgres,
  PostgresWorkDir,
  runPostgresProgram,
  TcpProxy,
  testTopology,
} from "@humanpass/testing";
import { afterAll, beforeAll, expect, it } from "vitest";
import { migrations } from "../src/db/migrations/index.ts";
import { SCHEMA, type VerifierDatabase } from "../src/db/schema.ts";
import { createSession } from "../src/db/sessions.ts";
import { recordVerification } from "../src/db/verifications.ts";
import type { AuthorizationRequest } from "../src/verification/token-verifier.ts";

const WORKERS = 8;
/** Of each kind. */
const ACKED_BEFORE_THE_KILL = 75;
const ACKED_AFTER_THE_SWITCH = 50;
/** CloudNativePG's `method: any, number: 1` over the one standby. */
const SYNCHRONOUS_STANDBY_NAMES = "ANY 1 (standby)";

let work: PostgresWorkDir;
let primary: OwnPostgres;
let standby: OwnPostgres;
let proxy: TcpProxy;
let verifierDb: Kysely<VerifierDatabase>;
let gatewayPool: Pool;
let gatewayDb: Kysely<PaymentGatewayDatabase>;

const throughTheProxy = (schema: string) =>
  createPool({
    connectionString: `postgres://postgres@127.0.0.1:${proxy.port}/postgres`,
    schema,
    max: WORKERS / 2,
    queryTimeoutMs: 5_000,
    // Connections the kill dropped while idle: expected here, and counted through the workers' failures.
    onError: () => undefined,
  });

beforeAll(async () => {
  work = await PostgresWorkDir.create("pg-failover");
  primary = await work.initdb("primary", [`synchronous_standby_names = '${SYNCHRONOUS_STANDBY_NAMES}'`]);
  standby = await work.basebackup("standby", primary, {
    wal: "stream",
    standby: true,
    settings: [
      `primary_conninfo = 'host=127.0.0.1 port=${primary.port} user=postgres application_name=standby'`,
      // Promoted, it runs alone until the operator attaches a new standby.
      "synchronous_standby_names = ''",
    ],
  });
  await standby.start();
  proxy = await new TcpProxy("127.0.0.1", primary.port).start();
  verifierDb = kyselyOn<VerifierDatabase>(throughTheProxy(SCHEMA));
  gatewayPool = throughTheProxy(PAYMENT_GATEWAY_SCHEMA);
  gatewayDb = kyselyOn<PaymentGatewayDatabase>(gatewayPool);
  await eventually(async () => {
    const { rows } = await sql<{ state: string }>`
      select state from pg_stat_replication where application_name = 'standby'`.execute(verifierDb);
    return rows[0]?.state === "streaming";
  }, 30_000);
  await migrateToLatest(verifierDb, { schema: SCHEMA, migrations });
  await migrateToLatest(gatewayDb, { schema: PAYMENT_GATEWAY_SCHEMA, migrations: paymentGatewayMigrations });
}, 120_000);

afterAll(async () => {
  await verifierDb?.destroy();
  await gatewayDb?.destroy();
  await proxy?.stop();
  await work?.remove();
}, 60_000);

it("keeps every verification (with its outbox event) and every payment it acknowledged through the loss of the primary", async () => {
  const topology = testTopology();
  const reservations = new GatewayHumanProofStore(
    gatewayPool,
    topology,
    createLogger({ name: "payment-gateway", level: "silent" }),
  );
  const nullifiers: string[] = [];
  const payments: string[] = [];
  let failed = 0;
  let running = true;

  const verify = async () => {
    const nullifier = BigInt(`0x${randomBytes(16).toString("hex")}`).toString();
    const now = new Date();
    const { sessionId } = await createSession(verifierDb, {
      createdAt: now,
      expiresAt: new Date(now.getTime() + 3_600_000),
      // The stored request is not read back here.
      request: (id) => ({ id: String(id) }) as unknown as AuthorizationRequest,
    });
    const outcome = await recordVerification(verifierDb, topology, {
      sessionId: BigInt(sessionId),
      proof: { nullifier, nullifierSessionId: "1", userDid: `did:example:${nullifier}`, userId: nullifier },
      now,
    });
    if (outcome === "recorded") nullifiers.push(nullifier);
  };
  const pay = async () => {
    const nonce = `0x${randomBytes(32).toString("hex")}`;
    const claimed = await reservations.reserve({
      network: "eip155:84532",
      asset: "0x036cbd53842c5426634e7929541ec2318f3dcf7e",
      payer: `0x${randomBytes(20).toString("hex")}`,
      nonce,
      expiresAt: new Date(Date.now() + 3_600_000),
    });
    if (claimed) payments.push(nonce);
  };
  const worker = async (job: () => Promise<void>) => {
    while (running) {
      try {
        await job();
      } catch {
        // The connection died under it: not acknowledged, so either outcome is allowed.
        failed++;
        await sleep(50);
      }
    }
  };
  const workers = Array.from({ length: WORKERS }, (_, i) => worker(i % 2 === 0 ? verify : pay));

  const atLeast = (n: { nullifiers: number; payments: number }) =>
    nullifiers.length >= n.nullifiers && payments.length >= n.payments;
  await eventually(
    () => atLeast({ nullifiers: ACKED_BEFORE_THE_KILL, payments: ACKED_BEFORE_THE_KILL }),
    60_000,
  );
  const { rows: replication } = await sql<{ application_name: string; sync_state: string }>`
    select application_name, sync_state from pg_stat_replication`.execute(verifierDb);
  const { rows: commit } = await sql<{ synchronous_commit: string }>`show synchronous_commit`.execute(
    verifierDb,
  );
  expect(
    { replication, synchronousCommit: commit[0]?.synchronous_commit },
    "a standby confirms every commit before the primary is lost",
  ).toEqual({
    replication: [{ application_name: "standby", sync_state: expect.stringMatching(/^(sync|quorum)$/) }],
    synchronousCommit: expect.stringMatching(/^(on|remote_write|remote_apply)$/),
  });

  primary.kill();
  const atKill = { nullifiers: nullifiers.length, payments: payments.length };
  await runPostgresProgram("pg_ctl", ["-D", standby.data, "-w", "promote"]);
  proxy.retarget("127.0.0.1", standby.port);
  await eventually(
    () =>
      atLeast({
        nullifiers: atKill.nullifiers + ACKED_AFTER_THE_SWITCH,
        payments: atKill.payments + ACKED_AFTER_THE_SWITCH,
      }),
    60_000,
  );
  running = false;
  await Promise.all(workers);

  const { rows } = await sql<{ nullifiers: number; events: number; payments: number; recovery: boolean }>`
    select
      (select count(*)::int from ${sql.table(`${SCHEMA}.nullifiers`)} where nullifier = any(${nullifiers})) as nullifiers,
      (select count(*)::int from ${sql.table(`${SCHEMA}.outbox`)}
        where event->'data'->>'nullifier' = any(${nullifiers})) as events,
      (select count(*)::int from ${sql.table(`${PAYMENT_GATEWAY_SCHEMA}.payment_reservations`)}
        where nonce = any(${payments})) as payments,
      pg_is_in_recovery() as recovery`.execute(verifierDb);
  console.info(
    `postgres failover: ${nullifiers.length} nullifiers and ${payments.length} payments acknowledged ` +
      `(${atKill.nullifiers} and ${atKill.payments} before the kill), ${failed} requests failed; on the promoted standby ` +
      `${rows[0]?.nullifiers} nullifiers, ${rows[0]?.events} events, ${rows[0]?.payments} payments`,
  );
  expect(rows[0]).toEqual({
    nullifiers: nullifiers.length,
    events: nullifiers.length,
    payments: payments.length,
    recovery: false,
  });
  expect(failed).toBeGreaterThan(0);
}, 180_000);
