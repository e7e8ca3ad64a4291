import { Counter, Gauge, Registry } from "prom-client";

export interface IndexerMetrics {
  registry: Registry;
  indexedBlock: Gauge;
  headBlock: Gauge;
  headLag: Gauge;
  records: Counter<"type">;
  recordReads: Counter;
  rpcErrors: Counter<"reason">;
  reorgs: Counter;
}

/** The indexer's Prometheus metrics, in a registry of their own (one per indexer, so tests can run several). */
export function createIndexerMetrics(): IndexerMetrics {
  const registry = new Registry();
  return {
    registry,
    indexedBlock: new Gauge({
      name: "chain_indexer_indexed_block",
      help: "Last block whose records are in the outbox",
      registers: [registry],
    }),
    headBlock: new Gauge({
      name: "chain_indexer_head_block",
      help: "Latest block the RPC reported",
      registers: [registry],
    }),
    headLag: new Gauge({
      name: "chain_indexer_head_lag_blocks",
      help: "Head block minus indexed block",
      registers: [registry],
    }),
    records: new Counter({
      name: "chain_indexer_records_total",
      help: "Events written to the outbox, by type",
      labelNames: ["type"],
      registers: [registry],
    }),
    recordReads: new Counter({
      name: "chain_indexer_record_reads_total",
      help: "Recorded attestations read with getAttestation because their transaction's calldata did not give them",
      registers: [registry],
    }),
    rpcErrors: new Counter({
      name: "chain_indexer_rpc_errors_total",
      help: "Failed RPC attempts (each is retried), by reason",
      labelNames: ["reason"],
      registers: [registry],
    }),
    reorgs: new Counter({
      name: "chain_indexer_reorgs_total",
      help: "Reorganizations rolled back",
      registers: [registry],
    }),
  };
}
