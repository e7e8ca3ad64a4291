import {
  type Counter,
  createMetrics,
  type Gauge,
  type Histogram,
  type ServiceMetrics,
} from "@humanpass/telemetry";

export interface IndexerMetrics {
  /** Where the instruments live, and their exposition. */
  service: ServiceMetrics;
  indexedBlock: Gauge;
  headBlock: Gauge;
  headLag: Gauge;
  records: Counter;
  recordReads: Counter;
  rpcErrors: Counter;
  reorgs: Counter;
  blockToOutboxLag: Histogram;
}

/** Buckets (seconds) for block time → outbox: a few block times when following, hours when backfilling. */
const BLOCK_LAG_BUCKETS_SECONDS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 900, 3600, 21600, 86400];

/** The indexer's series, on the service's instruments (a fresh set of its own when none is given: tests). */
export function createIndexerMetrics(
  service: ServiceMetrics = createMetrics({ serviceName: "chain-indexer" }),
): IndexerMetrics {
  const { meter } = service;
  return {
    service,
    indexedBlock: meter.createGauge("humanpass_chain_indexer_indexed_block", {
      description: "Last block whose records are in the outbox",
      unit: "{block}",
    }),
    headBlock: meter.createGauge("humanpass_chain_indexer_head_block", {
      description: "Latest block the RPC reported",
      unit: "{block}",
    }),
    headLag: meter.createGauge("humanpass_chain_indexer_head_lag_blocks", {
      description: "Head block minus indexed block",
      unit: "{block}",
    }),
    records: meter.createCounter("humanpass_chain_indexer_records_total", {
      description: "Events written to the outbox, by type",
    }),
    recordReads: meter.createCounter("humanpass_chain_indexer_record_reads_total", {
      description:
        "Recorded attestations read with getAttestation because their transaction's calldata did not give them",
    }),
    rpcErrors: meter.createCounter("humanpass_chain_indexer_rpc_errors_total", {
      description: "Failed RPC attempts (each is retried), by reason",
    }),
    reorgs: meter.createCounter("humanpass_chain_indexer_reorgs_total", {
      description: "Reorganizations rolled back",
    }),
    blockToOutboxLag: meter.createHistogram("humanpass_chain_indexer_block_to_outbox_lag_seconds", {
      description: "Timestamp of a range's last block to the commit of its records to the outbox",
      unit: "s",
      advice: { explicitBucketBoundaries: BLOCK_LAG_BUCKETS_SECONDS },
    }),
  };
}
