import type { Kysely, Transaction } from "@humanpass/db";
import type { Hex } from "viem";
import type { ChainIndexerDb, EmittedKind } from "./schema.ts";

export interface Cursor {
  blockNumber: bigint;
  blockHash: Hex;
}

export interface StoredBlock {
  number: bigint;
  hash: Hex;
}

export interface EmittedRecord {
  blockNumber: bigint;
  logIndex: number;
  kind: EmittedKind;
  recordId: Hex;
}

/** Another writer moved the cursor since we read it (a second replica); this transaction must not commit. */
export class CursorMovedError extends Error {
  override name = "CursorMovedError";
}

export async function loadCursor(db: Kysely<ChainIndexerDb>, chainId: number): Promise<Cursor | undefined> {
  const row = await db
    .selectFrom("cursor")
    .select(["block_number", "block_hash"])
    .where("chain_id", "=", chainId)
    .executeTakeFirst();
  return row && { blockNumber: BigInt(row.block_number), blockHash: row.block_hash as Hex };
}

/**
 * Moves the cursor from `expected` to `next` in one statement that fails when it is no longer at `expected`,
 * so two indexers on one database can never both commit the same range.
 */
export async function moveCursor(
  trx: Transaction<ChainIndexerDb>,
  chainId: number,
  expected: Cursor | undefined,
  next: Cursor,
): Promise<void> {
  const values = {
    block_number: next.blockNumber.toString(),
    block_hash: next.blockHash,
    updated_at: new Date(),
  };
  const moved = expected
    ? await trx
        .updateTable("cursor")
        .set(values)
        .where("chain_id", "=", chainId)
        .where("block_number", "=", expected.blockNumber.toString())
        .where("block_hash", "=", expected.blockHash)
        .returning("chain_id")
        .executeTakeFirst()
    : await trx
        .insertInto("cursor")
        .values({ chain_id: chainId, ...values })
        .onConflict((oc) => oc.column("chain_id").doNothing())
        .returning("chain_id")
        .executeTakeFirst();
  if (!moved) throw new CursorMovedError(`cursor of chain ${chainId} moved under us`);
}

export async function recordRange(
  trx: Transaction<ChainIndexerDb>,
  chainId: number,
  blocks: StoredBlock[],
  emitted: EmittedRecord[],
): Promise<void> {
  if (blocks.length > 0) {
    await trx
      .insertInto("blocks")
      .values(
        blocks.map((b) => ({ chain_id: chainId, block_number: b.number.toString(), block_hash: b.hash })),
      )
      .onConflict((oc) =>
        oc
          .columns(["chain_id", "block_number"])
          .doUpdateSet((eb) => ({ block_hash: eb.ref("excluded.block_hash") })),
      )
      .execute();
  }
  // Postgres caps a statement at 65,535 parameters: 5 per row.
  for (let i = 0; i < emitted.length; i += 10_000) {
    await trx
      .insertInto("emitted")
      .values(
        emitted.slice(i, i + 10_000).map((e) => ({
          chain_id: chainId,
          block_number: e.blockNumber.toString(),
          log_index: e.logIndex,
          kind: e.kind,
          record_id: e.recordId,
        })),
      )
      .execute();
  }
}

/** Known block hashes, newest first, from `below` down (exclusive). */
export async function recentBlocks(
  db: Kysely<ChainIndexerDb>,
  chainId: number,
  below: bigint,
  limit: number,
): Promise<StoredBlock[]> {
  const rows = await db
    .selectFrom("blocks")
    .select(["block_number", "block_hash"])
    .where("chain_id", "=", chainId)
    .where("block_number", "<", below.toString())
    .orderBy("block_number", "desc")
    .limit(limit)
    .execute();
  return rows.map((r) => ({ number: BigInt(r.block_number), hash: r.block_hash as Hex }));
}

/** Forgets every block above `ancestor`; returns what had been emitted from them. */
export async function forgetAbove(
  trx: Transaction<ChainIndexerDb>,
  chainId: number,
  ancestor: bigint,
): Promise<{ kind: EmittedKind; recordId: Hex }[]> {
  await trx
    .deleteFrom("blocks")
    .where("chain_id", "=", chainId)
    .where("block_number", ">", ancestor.toString())
    .execute();
  const rows = await trx
    .deleteFrom("emitted")
    .where("chain_id", "=", chainId)
    .where("block_number", ">", ancestor.toString())
    .returning(["kind", "record_id", "block_number", "log_index"])
    .execute();
  return rows
    .sort((a, b) => Number(BigInt(a.block_number) - BigInt(b.block_number)) || a.log_index - b.log_index)
    .map((r) => ({ kind: r.kind, recordId: r.record_id as Hex }));
}

/** Drops reorg bookkeeping older than the window; the cursor block itself is always kept. */
export async function pruneBelow(
  trx: Transaction<ChainIndexerDb>,
  chainId: number,
  below: bigint,
): Promise<void> {
  if (below <= 0n) return;
  await trx
    .deleteFrom("blocks")
    .where("chain_id", "=", chainId)
    .where("block_number", "<", below.toString())
    .execute();
  await trx
    .deleteFrom("emitted")
    .where("chain_id", "=", chainId)
    .where("block_number", "<", below.toString())
    .execute();
}
