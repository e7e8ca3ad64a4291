import { STREAMS, type StreamName, streamSubjects, subjectOf, type Topology } from "@humanpass/events";
import { AckPolicy, type ConsumerConfig, DeliverPolicy } from "@nats-io/jetstream";

/**
 * A service's durable pull consumer. The services start their consumers from these (`startConsumer`), the topology
 * step creates them before the services start (`applyServiceDurables`) and the NATS users are generated from them
 * (`SERVICE_GRANTS`): one definition, so none of the three can ask for another consumer than the others.
 */
export interface DurableSpec {
  stream: StreamName;
  durable: string;
  /** Event types to receive; all of the stream when omitted. One filter subject only, so NATS 2.9 works. */
  type?: string;
  ackWaitMs?: number;
}

export const DEFAULT_ACK_WAIT_MS = 30_000;

/** attestations-api's read model: the whole CHAIN stream, and VERIFIER's uniqueness proofs. */
export const ATTESTATIONS_API_DURABLES = {
  chain: { stream: "CHAIN", durable: "attestations-api-chain" },
  verifier: { stream: "VERIFIER", durable: "attestations-api-verifier", type: "uniqueness_verified" },
} as const satisfies Record<string, DurableSpec>;

/** webhooks relays every stream to registered endpoints: one durable per stream. */
export const WEBHOOKS_DURABLES: DurableSpec[] = (Object.keys(STREAMS) as StreamName[]).map((stream) => ({
  stream,
  durable: `webhooks-${STREAMS[stream].domain}`,
}));

/** A durable's whole configuration: pull (no deliver subject), explicit acks, from the stream's first message. */
export function durableConfig(topology: Topology, spec: DurableSpec): Partial<ConsumerConfig> {
  return {
    durable_name: spec.durable,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    filter_subject: spec.type
      ? subjectOf(topology, spec.stream, spec.type)
      : streamSubjects(topology, spec.stream),
    ack_wait: (spec.ackWaitMs ?? DEFAULT_ACK_WAIT_MS) * 1_000_000,
    max_ack_pending: 10_000,
  };
}

/** What an existing durable has otherwise than `spec` asks, one `field: old → new` each; a deliver subject too. */
export function durableDifferences(
  existing: Partial<ConsumerConfig>,
  topology: Topology,
  spec: DurableSpec,
): string[] {
  const wanted: Record<string, unknown> = { ...durableConfig(topology, spec), deliver_subject: undefined };
  const has = existing as Record<string, unknown>;
  return Object.entries(wanted)
    .filter(([key, value]) => JSON.stringify(has[key]) !== JSON.stringify(value))
    .map(([key, value]) => `${key}: ${JSON.stringify(has[key])} → ${JSON.stringify(value)}`);
}
