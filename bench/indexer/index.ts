// Backfill of 10,000 recorded attestations (5 schemas): chain → indexer → outbox → JetStream, in records/s.
// Also prints what the chain side costs on its own: eth_getLogs + decode; records rebuilt from the calldata of their
// transactions (what the indexer does); getAttestation via Multicall3, via a JSON-RPC batch of eth_calls, and one
// request per record (what it still does for records recorded through another contract); on the Hardhat devnet
// those per-record reads are what kept the backfill slow.

import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import {
  type ChainIndexerDb,
  ChainIndexerEnv,
  createChainClient,
  createIndexer,
  createIndexerMetrics,
  fetchHeaders,
  fetchRegistryLogs,
  fetchTransactions,
  migrations,
  type RecordedLog,
  readAttestationBatch,
  rebuildRecords,
  SCHEMA,
  wholeBlocksWithin,
} from "@humanpass/chain-indexer";
import { createDb, dropDatabase, ensureDatabase, migrateToLatest } from "@humanpass/db";
import {
  encodeSchemaData,
  identityFromAddress,
  mine,
  recordAttestations,
  registerSchema,
  startDevnet,
} from "@humanpass/devnet";
import {
  connectNats,
  ensureStreams,
  jetstreamManager,
  startOutboxRelay,
  streamName,
} from "@humanpass/event-bus";
import { sleep } from "@humanpass/retry";
import pino from "pino";
import type { Hex } from "viem";

const RECORDS = Number(process.env.BENCH_RECORDS ?? 10_000);
const BLOCK_RANGE = BigInt(process.env.BENCH_BLOCK_RANGE ?? ChainIndexerEnv.properties.BLOCK_RANGE.default);
const MAX_LOGS_PER_COMMIT = Number(
  process.env.BENCH_MAX_LOGS_PER_COMMIT ?? ChainIndexerEnv.properties.MAX_LOGS_PER_COMMIT.default,
);
const SCHEMAS = [
  { name: "AgentOwnership", schema: "bytes data", values: () => ["0x"] },
  { name: "Review", schema: "uint8 stars,string comment", values: (n: number) => [n % 6, `review ${n}`] },
  { name: "Score", schema: "uint256 score", values: (n: number) => [BigInt(n)] },
  { name: "Tag", schema: "string tag", values: (n: number) => [`tag-${n}`] },
  { name: "Badge", schema: "bytes32 badge", values: () => [`0x${"ab".repeat(32)}`] },
];
const logger = pino({ level: process.env.BENCH_LOG_LEVEL ?? "warn" });
const rate = (n: number, ms: number) => `${Math.round((n * 1000) / ms).toLocaleString("en")} records/s`;

/** CPU time (user + system, ms) the Hardhat node has used: the machine may be shared, wall time alone misleads. */
function nodeCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}
function measured(pid: number) {
  const wall = Date.now();
  const cpu = nodeCpuMs(pid);
  return (n: number) => {
    const wallMs = Date.now() - wall;
    const cpuMs = nodeCpuMs(pid) - cpu;
    return `${rate(n, wallMs)} wall (${wallMs} ms); chain node CPU ${cpuMs} ms = ${rate(n, Math.max(cpuMs, 1))} of node CPU`;
  };
}

const devnet = await startDevnet();
const base = new URL(process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres");
base.pathname = `/bench_indexer_${randomBytes(4).toString("hex")}`;
const url = base.toString();
const topology = { prefix: `bench${randomBytes(4).toString("hex")}` };
await ensureDatabase(url);
const db = createDb<ChainIndexerDb>({ connectionString: url, schema: SCHEMA, max: 6 });
await migrateToLatest(db, { schema: SCHEMA, migrations });
const nats = await connectNats(process.env.NATS_URL ?? "nats://127.0.0.1:4222", logger);
const jsm = await jetstreamManager(nats);
await ensureStreams(jsm, topology, ["CHAIN"]);

try {
  const pid = devnet.pid!;
  let done = measured(pid);
  const schemaIds: Hex[] = [];
  for (const s of SCHEMAS) schemaIds.push((await registerSchema(devnet, s)).id);
  const attesters = devnet.accounts.slice(1, 6).map((a) => identityFromAddress(a.address));
  const ids = (
    await recordAttestations(
      devnet,
      Array.from({ length: RECORDS }, (_, n) => ({
        schemaId: schemaIds[n % SCHEMAS.length]!,
        attester: attesters[Math.floor(n / 100) % attesters.length]!,
        recipient: identityFromAddress(`0x${(n + 1).toString(16).padStart(40, "0")}`),
        data: encodeSchemaData(SCHEMAS[n % SCHEMAS.length]!.schema, SCHEMAS[n % SCHEMAS.length]!.values(n)),
      })),
    )
  ).map((r) => r.id);
  await mine(devnet, 1);
  const head = await devnet.client.getBlockNumber();
  process.stdout.write(`setup: ${RECORDS} attestations recorded in ${head} blocks, ${done(RECORDS)}\n`);

  const client = createChainClient(devnet.rpcUrl, { timeoutMs: 60_000 });
  done = measured(pid);
  const logs = await fetchRegistryLogs(
    client,
    [devnet.addresses.schemaRegistry, devnet.addresses.attestationRegistry],
    0n,
    head,
  );
  process.stdout.write(`eth_getLogs + decode: ${logs.length} logs, ${done(logs.length)}\n`);

  const recorded = logs.filter((l): l is RecordedLog => l.eventName === "AttestationRecorded");
  done = measured(pid);
  // Range by range, as the indexer reads them.
  let rebuilt = 0;
  for (let start = 0; start < recorded.length; ) {
    const range = recorded.slice(
      start,
      start + wholeBlocksWithin(recorded.slice(start), MAX_LOGS_PER_COMMIT),
    );
    start += range.length;
    const [transactions, headers] = await Promise.all([
      fetchTransactions(client, [...new Set(range.map((l) => l.transactionHash))]),
      fetchHeaders(client, [...new Set(range.map((l) => l.blockNumber))]),
    ]);
    rebuilt += rebuildRecords({
      registry: devnet.addresses.attestationRegistry,
      logs: range,
      transactions: new Map([...transactions].map(([hash, tx]) => [hash, tx!])),
      headers: new Map(headers.map((h) => [h!.number, h!])),
    }).size;
  }
  process.stdout.write(
    `records from calldata (eth_getTransactionByHash + headers, decode): ${rebuilt} records, ${done(rebuilt)}\n`,
  );

  const sample = ids.slice(0, 1_000);
  const read = { registry: devnet.addresses.attestationRegistry, blockNumber: head };
  done = measured(pid);
  for (let i = 0; i < sample.length; i += 100) {
    await readAttestationBatch(client, sample.slice(i, i + 100), {
      ...read,
      multicallAddress: devnet.addresses.multicall3,
    });
  }
  process.stdout.write(`getAttestation, Multicall3 of 100: ${done(sample.length)}\n`);
  done = measured(pid);
  for (let i = 0; i < 200; i += 100) await readAttestationBatch(client, sample.slice(i, i + 100), read);
  process.stdout.write(`getAttestation, JSON-RPC batch of 100 eth_calls: ${done(200)}\n`);
  const single = createChainClient(devnet.rpcUrl, { timeoutMs: 60_000 });
  done = measured(pid);
  for (const id of sample.slice(0, 100))
    await readAttestationBatch(single, [id], { ...read, multicallAddress: undefined });
  process.stdout.write(`getAttestation, one request per record: ${done(100)}\n`);

  const relay = startOutboxRelay({
    nats,
    schema: SCHEMA,
    logger,
    connectionString: url,
    batchSize: 1_000,
  });
  const indexer = createIndexer({
    db,
    client,
    topology,
    logger,
    outboxCommitted: () => relay.wake(),
    metrics: createIndexerMetrics(),
    settings: {
      chainId: devnet.chainId,
      attestationRegistry: devnet.addresses.attestationRegistry,
      schemaRegistries: [devnet.addresses.schemaRegistry, devnet.addresses.legacySchemaRegistry],
      startBlock: 0n,
      confirmations: 1n,
      blockRange: BLOCK_RANGE,
      maxLogsPerCommit: MAX_LOGS_PER_COMMIT,
      readBatchSize: 100,
      readConcurrency: 2,
      multicallAddress: devnet.addresses.multicall3,
      pollIntervalMs: 50,
      retry: { baseMs: 50, maxMs: 2_000 },
      reorgWindowBlocks: 10_000n,
      progressLogIntervalMs: 2_000,
    },
  });
  const expected = RECORDS + SCHEMAS.length;
  done = measured(pid);
  const started = Date.now();
  const cpu = process.cpuUsage();
  indexer.start();
  const stream = streamName(topology, "CHAIN");
  let indexedAt = 0;
  for (;;) {
    const { state } = await jsm.streams.info(stream);
    if (!indexedAt) {
      const row = await db.selectFrom("cursor").select("block_number").executeTakeFirst();
      if (row && BigInt(row.block_number) >= head - 1n) indexedAt = Date.now();
    }
    if (state.messages >= expected) break;
    await sleep(20);
  }
  const { user, system } = process.cpuUsage(cpu);
  await indexer.stop();
  await relay.stop();
  process.stdout.write(
    `indexer backfill, chain → events in the outbox: ${rate(expected, indexedAt - started)} (${indexedAt - started} ms)\n` +
      `indexer backfill, chain → events published to JetStream: ${done(expected)}; ` +
      `indexer and relay CPU ${Math.round((user + system) / 1000)} ms\n` +
      `(load average ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores)\n`,
  );
} finally {
  await jsm.streams.delete(streamName(topology, "CHAIN")).catch(() => {});
  await nats.close();
  await db.destroy();
  await devnet.stop();
  await dropDatabase(url);
}
