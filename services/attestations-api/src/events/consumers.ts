import type { Kysely } from "@humanpass/db";
import { type NatsConnection, type RunningConsumer, startConsumer, type Topology } from "@humanpass/events";
import type { Logger } from "@humanpass/telemetry";
import { applyChainEvent, applyVerifierEvent } from "./apply";

export interface ReadModelDurables {
  chain: string;
  verifier: string;
}

export const DEFAULT_DURABLES: ReadModelDurables = {
  chain: "attestations-api-chain",
  verifier: "attestations-api-verifier",
};

/**
 * The two consumers that fill the read model. The whole CHAIN stream goes through one durable so schemas,
 * attestations, revocations and reverts are applied in the order the indexer saw them.
 */
export async function startReadModelConsumers(options: {
  db: Kysely<any>;
  nats: NatsConnection;
  topology: Topology;
  logger: Logger;
  durables?: ReadModelDurables;
}): Promise<RunningConsumer[]> {
  const durables = options.durables ?? DEFAULT_DURABLES;
  const common = { db: options.db, nats: options.nats, topology: options.topology, logger: options.logger };
  const chain = await startConsumer({
    ...common,
    stream: "CHAIN",
    durable: durables.chain,
    handler: applyChainEvent,
  });
  const verifier = await startConsumer({
    ...common,
    stream: "VERIFIER",
    durable: durables.verifier,
    type: "uniqueness_verified",
    handler: applyVerifierEvent,
  });
  return [chain, verifier];
}
