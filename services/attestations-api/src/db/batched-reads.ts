import { chunksByKey, type MicroBatcher, microBatcher } from "@humanpass/micro-batch";
import { read, type Statement } from "./read.ts";
import type { Queryable } from "./types.ts";

/** Most requests one statement answers together; larger bursts take several. */
const MAX_BATCH = 64;

interface Pending {
  statement: Statement;
  args: unknown[];
  resolve(rows: BatchedRow[]): void;
  reject(error: unknown): void;
}

/** A row of a batched statement: `ord` is the 1-based place of the request it answers. */
export type BatchedRow = { ord: string };

/**
 * The one throughput mechanism of the read path, kept because the benchmark showed it pays: the reads that arrive
 * in the same turn of the event loop for the same statement run as one statement, so under load the hot ownership
 * lookup costs Postgres and the pg client one round trip per batch rather than one per request (their CPU per
 * lookup, not the lookup's own work, is what the bench's host runs out of: see docs/performance.md).
 *
 * A batched statement takes one array parameter per argument of a request, the n-th element of each being the n-th
 * request's, and returns each request's rows tagged with its place: `unnest($1::text[], …) with ordinality as
 * r(…, ord)` joined laterally to what one request reads.
 */
export class BatchedReads {
  private readonly pool: Queryable;
  private readonly pending: MicroBatcher<Pending>;

  constructor(pool: Queryable) {
    this.pool = pool;
    this.pending = microBatcher((requests) => {
      for (const { items } of chunksByKey(requests, (p) => p.statement.name, MAX_BATCH))
        void this.run(items[0]!.statement, items);
    });
  }

  /** The rows `statement` returns for one request's `args`. */
  read<R extends BatchedRow>(statement: Statement, args: unknown[]): Promise<R[]> {
    return new Promise((resolve, reject) => {
      this.pending.add({ statement, args, resolve: resolve as (rows: BatchedRow[]) => void, reject });
    });
  }

  private async run(statement: Statement, batch: Pending[]): Promise<void> {
    try {
      const columns = batch[0]!.args.map((_, i) => batch.map((p) => p.args[i]));
      const rows = await read<BatchedRow>(this.pool, statement, columns);
      const answers: BatchedRow[][] = batch.map(() => []);
      for (const row of rows) answers[Number(row.ord) - 1]!.push(row);
      batch.forEach((p, i) => p.resolve(answers[i]!));
    } catch (error) {
      for (const p of batch) p.reject(error);
    }
  }
}
