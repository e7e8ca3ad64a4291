import type { Kysely } from "@humanpass/db";
import { enqueue, type Topology } from "@humanpass/event-bus";
import { backoffDelay, sleep } from "@humanpass/retry";
import { untraced } from "@humanpass/telemetry";
import { context, ROOT_CONTEXT, type Span, SpanStatusCode, trace } from "@opentelemetry/api";
import type { Logger } from "pino";
import type { Hex } from "viem";
import { type OnChainAttestation, readAttestationBatch } from "./chain/attestations.ts";
import type { ChainClient } from "./chain/client.ts";
import { type BlockHeader, fetchHeaders } from "./chain/headers.ts";
import { fetchRegistryLogs, isRangeRefused, type RegistryLog, wholeBlocksWithin } from "./chain/logs.ts";
import { type RecordedLog, rebuildRecords } from "./chain/records.ts";
import { type RetryOptions, rpcErrorReason, StoppedError, withRetry } from "./chain/retry.ts";
import { type ChainTransaction, fetchTransactions } from "./chain/transactions.ts";
import type { IndexerSettings } from "./config.ts";
import {
  type Cursor,
  CursorMovedError,
  forgetAbove,
  loadCursor,
  moveCursor,
  pruneBelow,
  recentBlocks,
  recordRange,
  type StoredBlock,
} from "./db/progress.ts";
import type { ChainIndexerDb } from "./db/schema.ts";
import { buildRangeEvents, type RangeEvents, SOURCE } from "./events/build.ts";
import type { IndexerMetrics } from "./metrics.ts";
import { ProgressReporter } from "./progress.ts";

export interface IndexerDeps {
  db: Kysely<ChainIndexerDb>;
  client: ChainClient;
  topology: Topology;
  settings: IndexerSettings;
  logger: Logger;
  metrics: IndexerMetrics;
  /** Wakes this process's outbox relay after a commit that wrote events (`ServiceRuntime.outboxCommitted`). */
  outboxCommitted?: () => void;
}

export interface Indexer {
  /** Runs until `stop`; RPC and database failures are retried, never fatal. */
  start(): void;
  stop(): Promise<void>;
  /** One step: index the next confirmed range, roll back a reorg, or nothing when caught up. */
  step(): Promise<StepResult>;
  /** Resolves once the chain id matches the configuration; rejects when it does not. */
  checkChain(): Promise<void>;
}

export type StepResult = "indexed" | "reverted" | "idle" | "retry";

/** The chain moved while a range was being read; the range is read again. */
class InconsistentRangeError extends Error {
  override name = "InconsistentRangeError";
}

const ANCESTOR_PAGE = 100;

interface PreparedRange {
  kind: "range";
  /** The range's trace, from its reading to its commit: the RPC calls and statements are its children. */
  span: Span;
  from: bigint;
  to: bigint;
  toHash: Hex;
  /** Timestamp (seconds) of block `to`. */
  toTime: bigint;
  head: bigint;
  safe: bigint;
  built: RangeEvents;
  blocks: StoredBlock[];
  /** Records read with getAttestation. */
  reads: number;
}

/** The last block a range's logs were read up to, and its hash then. */
interface Anchor {
  number: bigint;
  hash: Hex;
}

type Prepared = PreparedRange | { kind: "idle" } | { kind: "reorg" };

const tracer = trace.getTracer("@humanpass/chain-indexer");

function endSpan(span: Span, error?: unknown): void {
  if (error !== undefined) {
    span.recordException(error as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
  }
  span.end();
}

export function createIndexer(deps: IndexerDeps): Indexer {
  const { db, client, topology, settings, logger, metrics } = deps;
  const { chainId } = settings;
  const abort = new AbortController();
  const progress = new ProgressReporter(logger, settings.progressLogIntervalMs);
  const addresses = [...settings.schemaRegistries, settings.attestationRegistry];
  let blockRange = settings.blockRange;
  let loop: Promise<void> | undefined;

  const retryOptions = (extra: Partial<RetryOptions> = {}): RetryOptions => ({
    policy: settings.retry,
    logger,
    signal: abort.signal,
    onError: (reason) => metrics.rpcErrors.add(1, { reason }),
    ...extra,
  });
  const rpc = <T>(what: string, fn: () => Promise<T>, extra?: Partial<RetryOptions>) =>
    withRetry(what, fn, retryOptions(extra));

  async function headers(numbers: bigint[]): Promise<Map<bigint, BlockHeader | null>> {
    const unique = [...new Set(numbers)];
    const found = await rpc("eth_getBlockByNumber", () => fetchHeaders(client, unique));
    return new Map(unique.map((n, i) => [n, found[i] ?? null]));
  }

  /** Logs read past the last range given out, with the header they were read under, for the range after it. */
  let carried: { from: bigint; logs: RegistryLog[]; anchor: Anchor } | undefined;

  /**
   * Logs of [from, to], read while the header of `anchor` (the last block asked for) stayed the same; the caller
   * checks it still is. The range halves while the RPC refuses it and grows back afterwards. A range holding more
   * logs than one commit should ends at the last whole block that fits; the logs after it are kept for the next
   * range rather than read again.
   */
  async function logsOfRange(from: bigint, safe: bigint) {
    const kept = carried?.from === from ? carried : undefined;
    carried = undefined;
    if (kept) return commitSized(kept.logs, kept.anchor);
    for (;;) {
      const to = minBig(from + blockRange - 1n, safe);
      const before = (await headers([to])).get(to);
      if (!before) throw new InconsistentRangeError(`block ${to} disappeared`);
      try {
        const logs = await rpc("eth_getLogs", () => fetchRegistryLogs(client, addresses, from, to), {
          isFinal: isRangeRefused,
        });
        if (blockRange < settings.blockRange) blockRange = minBig(settings.blockRange, blockRange * 2n);
        return commitSized(logs, { number: to, hash: before.hash });
      } catch (error) {
        if (!isRangeRefused(error) || to === from) throw error;
        blockRange = maxBig(1n, (to - from + 1n) / 2n);
        logger.warn(
          { from: Number(from), to: Number(to), nextRange: Number(blockRange) },
          "RPC refused the log range; shrinking it",
        );
      }
    }
  }

  function commitSized(logs: RegistryLog[], anchor: Anchor) {
    if (logs.length <= settings.maxLogsPerCommit) return { to: anchor.number, logs, anchor };
    const count = wholeBlocksWithin(logs, settings.maxLogsPerCommit);
    const to = logs[count - 1]!.blockNumber;
    carried = { from: to + 1n, logs: logs.slice(count), anchor };
    return { to, logs: logs.slice(0, count), anchor };
  }

  async function readAttestations(ids: Hex[], blockNumber: bigint): Promise<Map<Hex, OnChainAttestation>> {
    const chunks: Hex[][] = [];
    for (let i = 0; i < ids.length; i += settings.readBatchSize)
      chunks.push(ids.slice(i, i + settings.readBatchSize));
    const results = new Map<Hex, OnChainAttestation>();
    let next = 0;
    const worker = async () => {
      while (next < chunks.length) {
        const chunk = chunks[next++]!;
        const records = await rpc(
          `getAttestation at block ${blockNumber}`,
          () =>
            readAttestationBatch(client, chunk, {
              registry: settings.attestationRegistry,
              multicallAddress: settings.multicallAddress,
              blockNumber,
            }),
          // A read that reverts is not an RPC hiccup: the step starts over and re-checks the chain.
          { isFinal: (error) => rpcErrorReason(error) === "other" },
        );
        chunk.forEach((id, i) => results.set(id, records[i]!));
      }
    };
    await Promise.all(Array.from({ length: Math.min(settings.readConcurrency, chunks.length) }, worker));
    return results;
  }

  function transactions(hashes: Hex[]): Promise<Map<Hex, ChainTransaction | null>> {
    const unique = [...new Set(hashes)];
    return rpc("eth_getTransactionByHash", () => fetchTransactions(client, unique));
  }

  /**
   * The records of the range's recorded ids and the times of its revoked ones. A record comes from the calldata
   * that recorded it where that tells it (see `rebuildRecords`), otherwise from a batched `getAttestation`; a
   * revocation is stamped with its block's timestamp (registry `_revoke`).
   */
  async function recordsOfRange(
    logs: RegistryLog[],
    blockHeaders: Map<bigint, BlockHeader>,
    sent: Map<Hex, ChainTransaction | null>,
    to: bigint,
  ) {
    const recorded = logs.filter((l): l is RecordedLog => l.eventName === "AttestationRecorded");
    const revoked = logs.filter((l) => l.eventName === "AttestationRevoked");
    if (settings.readEveryRecord) {
      const read = await readAttestations([...new Set([...recorded, ...revoked].map((l) => l.args.id))], to);
      const revocationTimes = new Map(revoked.map((l) => [l.args.id, read.get(l.args.id)!.revocationTime]));
      return { attestations: read, revocationTimes, reads: read.size };
    }
    const attestations = rebuildRecords({
      registry: settings.attestationRegistry,
      logs: recorded,
      transactions: new Map([...sent].filter((e): e is [Hex, ChainTransaction] => e[1] !== null)),
      headers: blockHeaders,
    });
    const missing = recorded.map((l) => l.args.id).filter((id) => !attestations.has(id));
    for (const [id, record] of await readAttestations(missing, to)) attestations.set(id, record);
    const revocationTimes = new Map(
      revoked.map((l) => [l.args.id, blockHeaders.get(l.blockNumber)!.timestamp]),
    );
    return { attestations, revocationTimes, reads: missing.length };
  }

  async function isCanonical(cursor: Cursor): Promise<boolean> {
    const header = (await headers([cursor.blockNumber])).get(cursor.blockNumber);
    return header?.hash === cursor.blockHash;
  }

  /** Finds the newest stored block still on the chain, emits blocks_reverted and moves the cursor back to it. */
  async function rollBack(cursor: Cursor): Promise<void> {
    let below = cursor.blockNumber + 1n;
    let ancestor: { number: bigint; hash: Hex } | undefined;
    while (!ancestor) {
      const stored = await recentBlocks(db, chainId, below, ANCESTOR_PAGE);
      if (stored.length === 0) {
        throw new Error(
          `reorg deeper than the ${settings.reorgWindowBlocks} blocks kept (no stored block below ${below} is canonical)`,
        );
      }
      const onChain = await headers(stored.map((b) => b.number));
      ancestor = stored.find((b) => onChain.get(b.number)?.hash === b.hash);
      below = stored[stored.length - 1]!.number;
    }
    const found = ancestor;
    // The cursor block itself is canonical: the RPC answered from two views of the chain (e.g. nodes behind a
    // load balancer at different heights); nothing is orphaned, the step is simply tried again.
    if (found.number === cursor.blockNumber)
      throw new InconsistentRangeError(`block ${cursor.blockNumber + 1n} does not follow the indexed block`);
    const orphaned = await db.transaction().execute(async (trx) => {
      await moveCursor(trx, chainId, cursor, { blockNumber: found.number, blockHash: found.hash });
      const records = await forgetAbove(trx, chainId, found.number);
      const ids = (kind: string) => records.filter((r) => r.kind === kind).map((r) => r.recordId);
      await enqueue(trx, topology, {
        stream: "CHAIN",
        source: SOURCE,
        type: "blocks_reverted",
        data: {
          chainId,
          fromBlock: Number(found.number + 1n),
          toBlock: Number(cursor.blockNumber),
          attestationIds: ids("attestation"),
          revokedAttestationIds: ids("revocation"),
          schemaIds: ids("schema"),
        },
      });
      return records.length;
    });
    deps.outboxCommitted?.();
    metrics.reorgs.add(1);
    metrics.records.add(1, { type: "blocks_reverted" });
    metrics.indexedBlock.record(Number(found.number));
    logger.warn(
      {
        fromBlock: Number(found.number + 1n),
        toBlock: Number(cursor.blockNumber),
        orphanedRecords: orphaned,
      },
      "chain reorganization below the confirmation depth: orphaned blocks reverted, indexing the canonical ones",
    );
  }

  /**
   * Reads and builds the next range after `cursor`, or says that there is none yet or that the chain reorganized.
   * A range gets a trace of its own (`index blocks`), ended by its commit; the head poll and the cursor check
   * before it are not traced, or an idle indexer would start a trace every poll.
   */
  async function prepare(cursor: Cursor | undefined): Promise<Prepared> {
    const head = await untraced(() => rpc("eth_blockNumber", () => client.getBlockNumber({ cacheTime: 0 })));
    metrics.headBlock.record(Number(head));
    const safe = head - settings.confirmations;
    const from = cursor ? cursor.blockNumber + 1n : settings.startBlock;
    if (cursor) metrics.headLag.record(Number(head - cursor.blockNumber));
    if (from > safe)
      return { kind: cursor && !(await untraced(() => isCanonical(cursor))) ? "reorg" : "idle" };

    const span = tracer.startSpan("index blocks", {
      root: true,
      attributes: { "humanpass.chain.from_block": Number(from), "humanpass.chain.head_block": Number(head) },
    });
    try {
      const read = await context.with(trace.setSpan(ROOT_CONTEXT, span), () =>
        readRange(cursor, head, safe, from, span),
      );
      if (read.kind !== "range") endSpan(span);
      return read;
    } catch (error) {
      endSpan(span, error);
      throw error;
    }
  }

  async function readRange(
    cursor: Cursor | undefined,
    head: bigint,
    safe: bigint,
    from: bigint,
    span: Span,
  ): Promise<Prepared> {
    const { to, logs, anchor } = await logsOfRange(from, safe);
    span.setAttribute("humanpass.chain.to_block", Number(to));
    // The transactions of recorded attestations; asked in the same tick, they share the headers' JSON-RPC batch.
    const recordingTxs = settings.readEveryRecord
      ? []
      : logs.filter((l) => l.eventName === "AttestationRecorded").map((l) => l.transactionHash);
    const [seen, sent] = await Promise.all([
      headers([from, to, anchor.number, ...logs.map((l) => l.blockNumber)]),
      transactions(recordingTxs),
    ]);
    const fromHeader = seen.get(from);
    if (cursor && fromHeader && fromHeader.parentHash !== cursor.blockHash) return { kind: "reorg" };
    const toHeader = seen.get(to);
    const toHash = toHeader?.hash;
    const consistent =
      fromHeader &&
      toHash &&
      seen.get(anchor.number)?.hash === anchor.hash &&
      logs.every((l) => seen.get(l.blockNumber)?.hash === l.blockHash) &&
      logs.every(
        (l) => !sent.has(l.transactionHash) || sent.get(l.transactionHash)?.blockHash === l.blockHash,
      );
    if (!consistent) throw new InconsistentRangeError(`blocks ${from}-${to} changed while they were read`);

    const blockHeaders = new Map([...seen].filter((e): e is [bigint, BlockHeader] => e[1] !== null));
    const { attestations, revocationTimes, reads } = await recordsOfRange(logs, blockHeaders, sent, to);
    const built = buildRangeEvents({ chainId, logs, headers: blockHeaders, attestations, revocationTimes });
    const blocks = [
      { number: to, hash: toHash },
      ...[...new Map(logs.map((l) => [l.blockNumber, l.blockHash])).entries()]
        .filter(([n]) => n !== to)
        .map(([number, hash]) => ({ number, hash })),
    ];
    return {
      kind: "range",
      span,
      from,
      to,
      toHash,
      toTime: toHeader?.timestamp ?? 0n,
      head,
      safe,
      built,
      blocks,
      reads,
    };
  }

  async function write(cursor: Cursor | undefined, range: PreparedRange): Promise<void> {
    const { to, toHash, built } = range;
    await db.transaction().execute(async (trx) => {
      // First: the conditional update locks the cursor row, so a second indexer on this database waits here and
      // then fails cleanly instead of writing the same range.
      await moveCursor(trx, chainId, cursor, { blockNumber: to, blockHash: toHash });
      await enqueue(trx, topology, built.events);
      await recordRange(trx, chainId, range.blocks, built.emitted);
      await pruneBelow(trx, chainId, to - settings.reorgWindowBlocks);
    });
    if (built.events.length > 0) deps.outboxCommitted?.();
  }

  async function commit(cursor: Cursor | undefined, range: PreparedRange): Promise<void> {
    const { from, to, head, safe, built } = range;
    range.span.setAttribute("humanpass.chain.events", built.events.length);
    try {
      await context.with(trace.setSpan(ROOT_CONTEXT, range.span), () => write(cursor, range));
    } catch (error) {
      endSpan(range.span, error);
      throw error;
    }
    endSpan(range.span);

    metrics.indexedBlock.record(Number(to));
    metrics.headLag.record(Number(head - to));
    metrics.records.add(built.counts.schemas, { type: "schema_registered" });
    metrics.records.add(built.counts.attestations, { type: "attestation_recorded" });
    metrics.records.add(built.counts.revocations, { type: "attestation_revoked" });
    metrics.recordReads.add(range.reads);
    metrics.blockToOutboxLag.record(Math.max(0, Date.now() / 1000 - Number(range.toTime)));
    progress.committed(from, to, safe, built.events.length);
    logger.debug({ from: Number(from), to: Number(to), events: built.events.length }, "range indexed");
  }

  /** The step after the range being committed, read meanwhile; used only if the cursor then is where it assumed. */
  let ahead: { after: Cursor; prepared: Promise<Prepared | undefined> } | undefined;

  /** What was read ahead, if it follows `cursor`; a stale read is still awaited, so none outlives its step. */
  async function takeAhead(cursor: Cursor | undefined): Promise<Prepared | undefined> {
    const early = ahead;
    ahead = undefined;
    if (!early) return undefined;
    const prepared = await early.prepared;
    const follows =
      cursor?.blockNumber === early.after.blockNumber && cursor.blockHash === early.after.blockHash;
    if (follows) return prepared;
    if (prepared?.kind === "range") endSpan(prepared.span);
    return undefined;
  }

  async function step(): Promise<StepResult> {
    const cursor = await loadCursor(db, chainId);
    const prepared = (await takeAhead(cursor)) ?? (await prepare(cursor));
    if (prepared.kind === "reorg") {
      await rollBack(cursor!);
      return "reverted";
    }
    if (prepared.kind === "idle") return "idle";
    const after = { blockNumber: prepared.to, blockHash: prepared.toHash };
    // Its failures are not this step's: the range is prepared again, and fails again, in the next step.
    ahead = { after, prepared: prepare(after).catch(() => undefined) };
    await commit(cursor, prepared);
    return "indexed";
  }

  async function checkChain(): Promise<void> {
    const actual = await rpc("eth_chainId", () => client.getChainId());
    if (actual !== chainId)
      throw new Error(`RPC serves chain id ${actual}, configured CHAIN_ID is ${chainId}`);
  }

  async function run(): Promise<void> {
    let failures = 0;
    while (!abort.signal.aborted) {
      try {
        const result = await step();
        failures = 0;
        if (result === "idle") await sleep(settings.pollIntervalMs, abort.signal);
      } catch (error) {
        if (error instanceof StoppedError || abort.signal.aborted) break;
        failures++;
        const delayMs = backoffDelay({ ...settings.retry, attempt: failures + 1 });
        const level =
          error instanceof InconsistentRangeError || error instanceof CursorMovedError ? "warn" : "error";
        logger[level](
          { err: (error as Error).message, retryInMs: delayMs },
          "indexing step failed; retrying",
        );
        await sleep(delayMs, abort.signal);
      }
    }
  }

  return {
    step,
    checkChain,
    start() {
      loop ??= run();
    },
    async stop() {
      abort.abort();
      await loop;
      const unused = await ahead?.prepared;
      if (unused?.kind === "range") endSpan(unused.span);
    },
  };
}

function minBig(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}

function maxBig(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}
