// attestations-api: the ownership lookup of spec 2 (GET /api/v1/attestations?schemaId=…&recipientEthereumAddress=…)
// over a read model of 1,000,000 attestations, and, in the same run, a bare Fastify route for reference.
// Data goes straight into the read model (server-side multi-row INSERT … SELECT generate_series), the servers run
// in child processes, autocannon drives them from this process. Prints req/s, latency percentiles and the host's
// steal time of both at each number of concurrent connections: with a fixed number of clients, latency is that
// number over throughput (Little's law), so one level alone cannot show both what the service sustains and how fast
// it answers.
//   BENCH_ROWS (default 1,000,000), BENCH_SECONDS (default 8), BENCH_CONNECTIONS (default 1,16,32,64,100),
//   BENCH_ROUNDS (default 3: the sweep of all levels is repeated, each level reported as the median of its rounds),
//   BENCH_KEEP_DB=1 (keep the loaded database), BENCH_DB=<name> (run on a database an earlier run kept, no loading)
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { migrations, SCHEMA } from "@humanpass/attestations-api";
import { createDb, dropDatabase, ensureDatabase, migrateToLatest, sql } from "@humanpass/db";
import autocannon from "autocannon";
import pg from "pg";

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONNECTIONS = (process.env.BENCH_CONNECTIONS ?? "1,16,32,64,100").split(",").map(Number);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const HERE = path.dirname(fileURLToPath(import.meta.url));
// The runtime flags of the services' image (the flags of its CMD), read from the Dockerfile so the two cannot drift.
const IMAGE_NODE_OPTIONS = (
  JSON.parse(
    /^CMD (\[.*\])$/m.exec(readFileSync(path.join(HERE, "../../Dockerfile"), "utf8"))?.[1] ?? "[]",
  ) as string[]
).filter((arg) => arg.startsWith("--"));

const dbUrl = new URL(process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres");
const REUSED = process.env.BENCH_DB;
dbUrl.pathname = `/${REUSED ?? `bench_attestations_${randomBytes(4).toString("hex")}`}`;
const databaseUrl = dbUrl.toString();

const OWNERSHIP = `0x${"a1".repeat(32)}`;
const REVIEW = `0x${"b2".repeat(32)}`;
const REGISTRY = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
const EMPTY_BYTES = `0x${"00".repeat(31)}20${"00".repeat(32)}`;
// Addresses made only of decimal digits are their own EIP-55 checksum form, so SQL can generate them.
function adminUrl(): string {
  const u = new URL(databaseUrl);
  u.pathname = "/postgres";
  return u.toString();
}
const agentAddress = (n: number) => `0x${String(5_000_000_000 + n).padStart(40, "0")}`;

async function load(): Promise<void> {
  await ensureDatabase(databaseUrl);
  const db = createDb<any>({ connectionString: databaseUrl, schema: SCHEMA, max: 2 });
  await migrateToLatest(db, { schema: SCHEMA, migrations });
  const started = Date.now();
  await sql`
    insert into schemas (id, name, schema_raw, resolver, revocable, creator, creator_iden3_id, registry, block_timestamp,
                         chain_id, block_number, log_index, tx_hash)
    values (${OWNERSHIP}, 'AgentOwnership', 'bytes data', ${`0x${"0".repeat(40)}`}, false, ${REGISTRY}, '0', ${REGISTRY}, 1700000000, 45056, 1, 0, ${`0x${"01".repeat(32)}`}),
           (${REVIEW}, 'Review', 'uint8 stars,string comment', ${`0x${"0".repeat(40)}`}, true, ${REGISTRY}, '0', ${REGISTRY}, 1700000000, 45056, 1, 1, ${`0x${"02".repeat(32)}`})`.execute(
    db,
  );
  // Loading into unindexed tables and building the indexes once afterwards is several times faster than
  // maintaining eleven indexes row by row; the definitions are the migration's own, read back from the catalog.
  const { rows: indexes } = await sql<{ indexname: string; indexdef: string }>`
    select indexname, indexdef from pg_indexes
    where schemaname = ${SCHEMA} and tablename = 'attestations' and indexname <> 'attestations_pkey'`.execute(
    db,
  );
  for (const { indexname } of indexes) await sql`drop index ${sql.id(SCHEMA, indexname)}`.execute(db);
  // Likewise the list totals: counted once at the end rather than row by row by their triggers.
  await sql`alter table attestations disable trigger user`.execute(db);
  const batch = 100_000;
  for (let from = 1; from <= ROWS; from += batch) {
    const to = Math.min(ROWS, from + batch - 1);
    // Every 10th attestation is a review (to the same agent as the ownership one before it), the others pair
    // one agent each with one of 100,000 humans; 1 in 100 is revoked.
    await sql`
      insert into attestations (id, schema_id, creation_time, expiration_time, revocable, revoked, revocation_time,
        attester_did, attester_iden3_id, attester_address, recipient_did, recipient_iden3_id, recipient_address,
        ref_id, data, registry, chain_id, block_number, log_index, tx_hash)
      select '0x' || md5('a' || g) || md5('b' || g),
             case when g % 10 = 0 then ${REVIEW} else ${OWNERSHIP} end,
             1700000000 + g, 0, g % 10 = 0, g % 100 = 1, case when g % 100 = 1 then 1800000000 else 0 end,
             'did:iden3:billions:main:human' || (g % 100000), (10000000 + g % 100000)::text,
             '0x' || lpad((g % 100000)::text, 40, '0'),
             'did:iden3:billions:main:agent' || x.agent, (1000000000 + x.agent)::text,
             '0x' || lpad((5000000000 + x.agent)::text, 40, '0'),
             ${`0x${"0".repeat(64)}`}, ${EMPTY_BYTES}, ${REGISTRY}, 45056, 1000 + g / 10, g % 10,
             '0x' || md5('t' || g) || md5('u' || g)
      from generate_series(${from}::int, ${to}::int) g
      cross join lateral (select g - case when g % 10 = 0 then 1 else 0 end as agent) x`.execute(db);
    process.stdout.write(
      `  loaded ${to.toLocaleString("en")} attestations (${((Date.now() - started) / 1000).toFixed(1)} s)\n`,
    );
  }
  for (const { indexdef } of indexes) await sql.raw(indexdef).execute(db);
  await sql`select recount_list_totals()`.execute(db);
  await sql`alter table attestations enable trigger user`.execute(db);
  process.stdout.write(
    `  ${indexes.length} indexes rebuilt, list totals counted (${((Date.now() - started) / 1000).toFixed(1)} s)\n`,
  );
  // A read model in service has had its rows read and vacuumed long before; a bulk-loaded one has not, and the first
  // lookups of each row would set its hint bits (dirtying the page) during the measured runs.
  await sql`vacuum analyze`.execute(db);
  // A read model in service is hot; a freshly loaded one is on disk. pg_prewarm (contrib) reads the table and the
  // lookup index into memory first, when the server has it.
  try {
    await sql`create extension if not exists pg_prewarm`.execute(db);
    await sql`select pg_prewarm(${`${SCHEMA}.attestations`}), pg_prewarm(${`${SCHEMA}.attestations_schema_recipient_address`})`.execute(
      db,
    );
    process.stdout.write("  table and lookup index prewarmed\n");
  } catch (e) {
    process.stdout.write(
      `  no pg_prewarm (${(e as Error).message}); the warm-up run is all the warming there is\n`,
    );
  }
  await db.destroy();
}

function startServer(mode: "api" | "bare"): Promise<{ child: ChildProcess; port: number }> {
  // Both servers run with the image's flags.
  const child = spawn(
    process.execPath,
    [...IMAGE_NODE_OPTIONS, "--conditions=@humanpass/source", path.join(HERE, "server.ts"), mode],
    {
      env: { ...process.env, DATABASE_URL: databaseUrl },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk) => {
      out += chunk;
      const m = /port (\d+)/.exec(out);
      if (m) resolve({ child, port: Number(m[1]) });
    });
    child.once("exit", (code) => reject(new Error(`${mode} server exited with ${code}`)));
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  await exited;
}

/** Ownership lookups of random agents that have an active pairing (not one of the revoked 1 in 100). */
function lookupPath(): string {
  for (;;) {
    const n = 1 + Math.floor(Math.random() * ROWS);
    if (n % 10 === 0 || n % 100 === 1) continue;
    return `/api/v1/attestations?schemaId=${OWNERSHIP}&recipientEthereumAddress=${agentAddress(n)}`;
  }
}

/** CPU time (user + system) a process has used, in ms, from /proc (Linux); NaN elsewhere. */
function cpuMs(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return Number.NaN;
  }
}

/** The machine's CPU time counters (jiffies) from /proc/stat: all of them, and steal, the time the hypervisor ran
 * something else while this machine's CPUs had work. Undefined where there is no /proc/stat. */
function cpuTimes(): { total: number; steal: number } | undefined {
  try {
    const fields = readFileSync("/proc/stat", "utf8")
      .split("\n")[0]!
      .trim()
      .split(/\s+/)
      .slice(1, 9)
      .map(Number);
    return { total: fields.reduce((a, b) => a + b, 0), steal: fields[7]! };
  } catch {
    return undefined;
  }
}

function stealPercent(before: ReturnType<typeof cpuTimes>, after: ReturnType<typeof cpuTimes>): number {
  if (!before || !after || after.total === before.total) return Number.NaN;
  return Math.round((100 * (after.steal - before.steal)) / (after.total - before.total));
}

/** CPU time of each Postgres backend serving the bench database (the servers' pooled connections), by pid. */
async function postgresCpuMs(admin: pg.Client): Promise<Map<number, number>> {
  const { rows } = await admin.query<{ pid: number }>("select pid from pg_stat_activity where datname = $1", [
    dbUrl.pathname.slice(1),
  ]);
  return new Map(rows.map(({ pid }) => [pid, cpuMs(pid)]));
}

/** What the backends alive at the end used in between; one opened meanwhile counts from zero. */
function postgresCpuDelta(before: Map<number, number>, after: Map<number, number>): number {
  let sum = 0;
  for (const [pid, ms] of after) sum += ms - (before.get(pid) ?? 0);
  return sum;
}

async function measured(child: ChildProcess, run: () => Promise<autocannon.Result>) {
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  const [serverBefore, pgBefore] = [cpuMs(child.pid), await postgresCpuMs(admin)];
  const loadBefore = process.cpuUsage();
  const result = await run();
  const load = process.cpuUsage(loadBefore);
  const [serverAfter, pgAfter] = [cpuMs(child.pid), await postgresCpuMs(admin)];
  await admin.end();
  const perRequest = (ms: number) => Math.round((ms * 1000) / Math.max(1, result.requests.total));
  return {
    result,
    serverUs: perRequest(serverAfter - serverBefore),
    postgresUs: perRequest(postgresCpuDelta(pgBefore, pgAfter)),
    loadUs: perRequest((load.user + load.system) / 1000),
  };
}

/**
 * A run of `seconds` on `connections` connections, each request's path from `pathFor`. Both routes take the same
 * path through autocannon (a `setupRequest` building every request anew, about 14 µs of its CPU), so the load
 * generator, which shares the two cores with the servers and Postgres, weighs on both alike. Requests built ahead
 * of the run would leave it less to do on both sides, and the bare route gains the most from that.
 */
async function cannon(port: number, pathFor: () => string, seconds: number, connections: number) {
  return autocannon({
    url: `http://127.0.0.1:${port}`,
    connections,
    duration: seconds,
    requests: [{ setupRequest: (req: any) => ({ ...req, path: pathFor() }) }],
  });
}

function summary(name: string, connections: number, run: Awaited<ReturnType<typeof level>>) {
  const r = run.result;
  return {
    name,
    connections,
    "server CPU µs/req": run.serverUs,
    // A server answers on one thread (GC helpers aside): near 100 % of a core, that thread is the bottleneck.
    "server CPU %": Math.round((run.serverUs * run.result.requests.average) / 10_000),
    "Postgres CPU µs/req": run.postgresUs,
    "autocannon CPU µs/req": run.loadUs,
    "req/s": Math.round(r.requests.average),
    "p50 ms": r.latency.p50,
    "p99 ms": r.latency.p99,
    "max ms": r.latency.max,
    requests: r.requests.total,
    non2xx: r.non2xx,
    errors: r.errors,
    "steal %": run.stealPercent,
  };
}

/**
 * The target, both at one level: at least 0.4× the bare route, p99 under 10 ms. It is a ratio to the bare route of the
 * same round because absolute throughput on a shared host moves with its load.
 */
function targetVerdict(p99Ms: number, ratio: number): string {
  const missing = [p99Ms >= 10 && "p99 not under 10 ms", ratio < 0.4 && "under 0.4× the bare route"].filter(
    Boolean,
  );
  return missing.length === 0 ? "target met" : `target missed: ${missing.join(", ")}`;
}

/** Checks that the API answers a sample lookup with the one attestation the bench loaded for it. */
async function checkSample(port: number): Promise<void> {
  const sample = lookupPath();
  const body = (await (await fetch(`http://127.0.0.1:${port}${sample}`)).json()) as {
    totalItems: number;
    data: { toEthereumAddress: string }[];
  };
  if (body.totalItems !== 1)
    throw new Error(`lookup ${sample} returned ${body.totalItems} items, expected 1`);
  process.stdout.write(`  sample lookup ok: 1 item for ${body.data[0]!.toEthereumAddress}\n`);
}

/** One measured run at a connection level, after a warm-up (JIT, pool, Postgres buffers). */
async function level(
  server: { child: ChildProcess; port: number },
  pathFor: () => string,
  connections: number,
) {
  await cannon(server.port, pathFor, 2, connections);
  const before = cpuTimes();
  const run = await measured(server.child, () => cannon(server.port, pathFor, SECONDS, connections));
  return { ...run, stealPercent: stealPercent(before, cpuTimes()) };
}

type Level = Awaited<ReturnType<typeof level>>;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** A level's lookup and bare-route runs of one round, and what the target asks of them. */
function verdictOf(lookup: Level, bare: Level) {
  const [check, reference] = [lookup.result, bare.result];
  const ratio = check.requests.average / reference.requests.average;
  return {
    reqPerSecond: check.requests.average,
    p50: check.latency.p50,
    p99: check.latency.p99,
    ratio,
    bareReqPerSecond: reference.requests.average,
    bareP99: reference.latency.p99,
    verdict: targetVerdict(check.latency.p99, ratio),
  };
}

let keep = false;
try {
  if (REUSED) process.stdout.write(`reusing ${REUSED}\n`);
  else {
    process.stdout.write(
      `loading ${ROWS.toLocaleString("en")} attestations into ${dbUrl.pathname.slice(1)}\n`,
    );
    await load();
  }
  // Both servers stay up and each level runs the two back to back, so a change in what the host gives this
  // machine (steal time, shown per run) affects both sides of a ratio alike. The whole sweep is repeated
  // ROUNDS times: on a shared host one run of a level moved by up to 50 % between sweeps minutes apart, so a level's
  // figures are the median of its rounds, and each round says on its own whether it met the target.
  const [api, bare] = [await startServer("api"), await startServer("bare")];
  const rounds: Array<Array<{ lookup: Level; bare: Level }>> = [];
  try {
    await checkSample(api.port);
    for (let round = 0; round < ROUNDS; round++) {
      const runs = [];
      for (const connections of CONNECTIONS) {
        const lookup = await level(api, lookupPath, connections);
        runs.push({ lookup, bare: await level(bare, () => "/bare", connections) });
      }
      rounds.push(runs);
    }
  } finally {
    await Promise.all([stop(api.child), stop(bare.child)]);
  }
  console.table(
    rounds.flatMap((runs, round) =>
      runs.flatMap(({ lookup, bare }, i) => [
        {
          round: round + 1,
          ...summary("GET /api/v1/attestations?schemaId&recipientEthereumAddress", CONNECTIONS[i]!, lookup),
        },
        { round: round + 1, ...summary("bare Fastify route", CONNECTIONS[i]!, bare) },
      ]),
    ),
  );
  for (const [i, connections] of CONNECTIONS.entries()) {
    const each = rounds.map((runs) => verdictOf(runs[i]!.lookup, runs[i]!.bare));
    const [reqPerSecond, p50, p99, ratio] = [
      median(each.map((r) => r.reqPerSecond)),
      median(each.map((r) => r.p50)),
      median(each.map((r) => r.p99)),
      median(each.map((r) => r.ratio)),
    ];
    const met = each.filter((r) => r.verdict === "target met").length;
    process.stdout.write(
      `${connections} connections, median of ${each.length}: ownership lookup ${Math.round(reqPerSecond)} req/s, ` +
        `p50 ${p50} ms, p99 ${p99} ms; ${ratio.toFixed(2)}× the bare route ` +
        `(${Math.round(median(each.map((r) => r.bareReqPerSecond)))} req/s, p99 ${median(each.map((r) => r.bareP99))} ms); ` +
        `${targetVerdict(p99, ratio)} (met in ${met} of ${each.length} rounds)\n`,
    );
    for (const [round, r] of each.entries())
      process.stdout.write(
        `  round ${round + 1}: ${Math.round(r.reqPerSecond)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, ` +
          `${r.ratio.toFixed(2)}× (${Math.round(r.bareReqPerSecond)} req/s); ${r.verdict}\n`,
      );
  }
  process.stdout.write(
    `${ROUNDS} rounds of ${SECONDS} s per level and server, ${ROWS.toLocaleString("en")} attestations\n`,
  );
  keep = process.env.BENCH_KEEP_DB === "1" || REUSED !== undefined;
} finally {
  if (!keep && !REUSED) {
    await dropDatabase(databaseUrl);
  }
}
