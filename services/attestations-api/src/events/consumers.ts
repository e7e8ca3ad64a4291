import type { Kysely } from "@humanpass/db";
import {
  type NatsConnection,
  type RunningConsumer,
  startConsumer,
  type Topology,
} from "@humanpass/event-bus";
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
}): Promise<RunningConsumer[]> {
  const durables = options.durables ?? DEFAULT_DURABLES;
  const common = { db: options.db, nats: options.nats, topology: options.topology, logger: options.logger };
  const chain = await startConsumer({
    ...common,
    stream: "CHAIN",
    durable: durables.chain,
    exclusive: true,
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
