// The compose test's hold on the running stack (scripts/compose/test.sh brought it up): its URLs and devnet from the
// stack file and the devnet's log, the containers through the Engine API, Postgres as the operator, and the
// record of everything the workload did.

import { createPool } from "@humanpass/db";
import { connectDevnet, type Devnet, type DevnetAccount } from "@humanpass/devnet";
import { jetstreamManager } from "@humanpass/event-bus";
import { sleep } from "@humanpass/retry";
import type { NatsConnection } from "@nats-io/transport-node";
import { type DevnetSummary, devnetSummary } from "../compose-devnet.ts";
import { readStackFile, type StackFile } from "../stack-file.ts";
import { containersOf, replicasOf } from "./docker.ts";
import type { FaultEnv } from "./faults.ts";
import { attestationsServed, events, SCHEMAS } from "./invariants.ts";
import type { WorkloadRecord } from "./workload.ts";

export interface Harness {
  stack: StackFile;
  summary: DevnetSummary;
  devnet: Devnet;
  databaseUrl: string;
  jaegerUrl: string;
  /** The stack's Prometheus (deploy/observability/prometheus.yml), its rules those of the compose test's copy. */
  prometheusUrl: string;
  /** One connection as the operator, for the figures the checks read (usage, the indexer's cursor, outboxes). */
  pool: ReturnType<typeof createPool>;
  faults: FaultEnv;
  record: WorkloadRecord;
  log(line: string): void;
}

export async function openHarness(): Promise<Harness> {
  const env = process.env;
  const stack = readStackFile();
  const summary = await devnetSummary();
  if (!stack || !summary) throw new Error("the compose stack is not up (scripts/compose/test.sh starts it)");
  const project = env.COMPOSE_PROJECT_NAME || "humanpass";
  const databaseUrl = `postgres://postgres:${env.POSTGRES_PASSWORD || "humanpass"}@127.0.0.1:${env.POSTGRES_PORT || 55432}/humanpass`;
  // Progress lines for whoever watches the run (CI's log), as the compose scripts print theirs: not a log record.
  const log = (line: string) => process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);
  return {
    stack,
    summary,
    devnet: connectDevnet({
      rpcUrl: stack.devnetRpcUrl,
      chainId: summary.chainId,
      addresses: {
        schemaRegistry: summary.schemaRegistry,
        legacySchemaRegistry: summary.legacySchemaRegistry,
        attestationRegistry: summary.attestationRegistry,
        usdc: summary.usdc,
        multicall3: summary.multicall3,
      } as never,
      accounts: summary.accounts as DevnetAccount[],
    }),
    databaseUrl,
    jaegerUrl: `http://127.0.0.1:${env.JAEGER_UI_PORT || 16686}`,
    prometheusUrl: `http://127.0.0.1:${env.PROMETHEUS_PORT || 9090}`,
    pool: createPool({ connectionString: databaseUrl, schema: "public", max: 1 }),
    faults: {
      replicas: () => replicasOf(project),
      containers: (service) => containersOf(project, service),
      log,
      outages: [],
      kills: [],
      readyTimeoutMs: 90_000,
      hogs: Number(env.COMPOSE_TEST_HOGS || 0),
    },
    record: { responses: [], attestations: [], claims: [], paid: [] },
    log,
  };
}

/** The payment gateway's usage count per human (empty before its schema exists). */
export async function humanUsage(h: Harness): Promise<Map<string, number>> {
  const { rows } = await h.pool
    .query<{ human_id: string; count: number }>("select human_id, count from payment_gateway.human_usage")
    .catch(() => ({ rows: [] }));
  return new Map(rows.map((r) => [r.human_id, r.count]));
}

/** The last block the chain-indexer committed (-1 before its first). */
export async function indexerCursor(h: Harness): Promise<bigint> {
  const { rows } = await h.pool.query<{ block_number: string }>(
    "select block_number from chain_indexer.cursor",
  );
  return BigInt(rows[0]?.block_number ?? -1);
}

/** Messages the durable consumers of every stream have yet to be delivered or to acknowledge. */
async function consumersPending(nc: NatsConnection): Promise<number> {
  const jsm = await jetstreamManager(nc);
  let pending = 0;
  for await (const stream of jsm.streams.list())
    for await (const consumer of jsm.consumers.list(stream.config.name))
      if (consumer.config.durable_name) pending += consumer.num_pending + consumer.num_ack_pending;
  return pending;
}

/**
 * Waits (bounded) until every outbox is drained, every durable consumer has acknowledged all its stream holds and
 * applied every event of it, and the API serves every attestation the workload wrote. Returns whether it got there; the invariants are checked
 * either way.
 */
export async function settle(
  h: Harness,
  nc: NatsConnection,
  attesterDids: string[],
  timeoutMs: number,
): Promise<boolean> {
  const pendingSql = SCHEMAS.map(
    (s) => `select count(*) as n from "${s}".outbox where published_at is null`,
  ).join(" union all ");
  for (const until = Date.now() + timeoutMs; Date.now() < until; await sleep(1_000)) {
    const pending = await h.pool
      .query<{ n: string }>(pendingSql)
      .then((r) => r.rows.reduce((sum, row) => sum + Number(row.n), 0))
      .catch(() => -1);
    if (pending !== 0 || (await consumersPending(nc).catch(() => -1)) !== 0) continue;
    // A durable's pending count is its leader's view: on a cluster, a leader whose stream replica is still catching
    // up after a fault reports 0 for a moment (seen: 0, then 54 pending a second later). Caught up is every
    // consumer's inbox holding every event of its stream, as the appliedOnce invariant counts it.
    const applied = await events(h.databaseUrl, nc).catch(() => []);
    if (applied.length === 0 || !applied.every((v) => v.ok)) continue;
    const served = await attestationsServed(h.stack.urls["attestations-api"], h.record, attesterDids).catch(
      () => [],
    );
    if (served.length > 0 && served.every((v) => v.ok)) return true;
  }
  return false;
}
