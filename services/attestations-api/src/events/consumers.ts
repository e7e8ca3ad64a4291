import type { Kysely } from "@humanpass/db";
import {
  ATTESTATIONS_API_DURABLES,
  type NatsConnection,
  type RunningConsumer,
  startConsumer,
  type Topology,
} from "@humanpass/event-bus";
import type { Logger, Meter } from "@humanpass/telemetry";
import { applyChainEvent, applyVerifierEvent } from "./apply.ts";

export interface ReadModelDurables {
  chain: string;
  verifier: string;
}

/** The names the topology step creates (and the service's NATS user may use): ATTESTATIONS_API_DURABLES. */
export const DEFAULT_DURABLES: ReadModelDurables = {
  chain: ATTESTATIONS_API_DURABLES.chain.durable,
  verifier: ATTESTATIONS_API_DURABLES.verifier.durable,
};

/**
 * The two consumers that fill the read model. The whole CHAIN stream goes through one durable, applied by one
 * replica at a time: a revocation, its attestation and a revert of their blocks may arrive in any order, and each
 * handler reads what the others wrote, so their transactions must not overlap.
 */
export async function startReadModelConsumers(options: {
  db: Kysely<any>;
  nats: NatsConnection;
  topology: Topology;
  logger: Logger;
  durables?: ReadModelDurables;
  /** Where the consumers' series and the age of their last applied event go; none without. */
  meter?: Meter;
}): Promise<RunningConsumer[]> {
  const durables = options.durables ?? DEFAULT_DURABLES;
  const common = {
    db: options.db,
    nats: options.nats,
    topology: options.topology,
    logger: options.logger,
    meter: options.meter,
  };
  const chain = await startConsumer({
    ...common,
    ...ATTESTATIONS_API_DURABLES.chain,
    durable: durables.chain,
    exclusive: true,
    handler: applyChainEvent,
  });
  const verifier = await startConsumer({
    ...common,
    ...ATTESTATIONS_API_DURABLES.verifier,
    durable: durables.verifier,
    handler: applyVerifierEvent,
  });
  options.meter
    ?.createObservableGauge("humanpass_attestations_api_last_applied_event_age_seconds", {
      description: "Now minus the time of the last event this replica applied, per consumer",
      unit: "s",
    })
    .addCallback((result) => {
      for (const [durable, consumer] of [
        [durables.chain, chain],
        [durables.verifier, verifier],
      ] as const) {
        const time = consumer.stats.lastAppliedEventTime;
        if (time !== undefined) result.observe(Math.max(0, Date.now() - time) / 1000, { consumer: durable });
      }
    });
  return [chain, verifier];
}
