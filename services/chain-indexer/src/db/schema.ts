import type { OutboxTables } from "@humanpass/event-bus";

export const SCHEMA = "chain_indexer";

/** Last block whose records are in the outbox. */
export interface CursorTable {
  chain_id: number;
  block_number: string;
  block_hash: string;
  updated_at: Date;
}

/** Hashes of indexed blocks (range ends and blocks with records): the reference for reorg detection. */
export interface BlocksTable {
  chain_id: number;
  block_number: string;
  block_hash: string;
}

export type EmittedKind = "schema" | "attestation" | "revocation";

/** What was emitted from each block, so that a reorg can name the orphaned records. */
export interface EmittedTable {
  chain_id: number;
  block_number: string;
  log_index: number;
  kind: EmittedKind;
  record_id: string;
}

export interface ChainIndexerDb extends OutboxTables {
  cursor: CursorTable;
  blocks: BlocksTable;
  emitted: EmittedTable;
}
