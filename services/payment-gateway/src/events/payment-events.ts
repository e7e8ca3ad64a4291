import type { Kysely } from "@humanpass/db";
import {
  eventSchema,
  type HumanNotRegisteredData,
  type HumanVerifiedData,
  type MaxUseExceededData,
  type OutboxEvent,
  type OutboxRow,
  outboxRows,
  type PaymentFailedData,
  type PaymentSettledData,
  type Topology,
  writeOutboxRows,
} from "@humanpass/event-bus";
import type { HumanProofEvent } from "@humanpass/human-proof";
import { groupWriter } from "@humanpass/micro-batch";
import type { Logger } from "@humanpass/telemetry";
import type { TSchema } from "@sinclair/typebox";
import { type TypeCheck, TypeCompiler } from "@sinclair/typebox/compiler";
import { SERVICE_NAME } from "../config.ts";

/** The gateway's events (stream PAYMENTS) and their payloads, as in the catalog. */
export interface PaymentEventData {
  human_verified: HumanVerifiedData;
  human_not_registered: HumanNotRegisteredData;
  max_use_exceeded: MaxUseExceededData;
  payment_settled: PaymentSettledData;
  payment_failed: PaymentFailedData;
}
export type PaymentEventType = keyof PaymentEventData;

export interface PaymentEvents {
  /** Resolves once the event is in the outbox; `drain` waits until every event emitted so far is written. */
  emit<T extends PaymentEventType>(type: T, data: PaymentEventData[T]): Promise<void>;
  drain?(): Promise<void>;
}

/** A human-proof hook event as the PAYMENTS event of the same type. */
export function paymentEventOf(event: HumanProofEvent): { type: PaymentEventType; data: unknown } {
  switch (event.type) {
    case "human_verified":
      return {
        type: event.type,
        data: {
          humanId: event.humanId,
          verifiedAt: event.verifiedAt,
          humanDid: event.humanDid,
          resource: event.resource,
          agentDid: event.agentDid,
        },
      };
    case "human_not_registered":
      return { type: event.type, data: { did: event.did, resource: event.resource } };
    case "max_use_exceeded":
      return {
        type: event.type,
        data: { humanId: event.humanId, maxUse: event.maxUse, resource: event.resource, scope: event.scope },
      };
  }
}

// Every paid request checks one or more events: compiled checks cost a fraction of Value.Check.
const checkers = new Map<PaymentEventType, TypeCheck<TSchema>>();
function checkerOf(type: PaymentEventType): TypeCheck<TSchema> | undefined {
  let check = checkers.get(type);
  if (!check) {
    const schema = eventSchema("PAYMENTS", type);
    if (!schema) return undefined;
    check = TypeCompiler.Compile(schema);
    checkers.set(type, check);
  }
  return check;
}

/**
 * The event for the outbox, once checked against the catalog schema its consumers use; undefined (and logged)
 * when it does not match, so a malformed event is never published.
 */
export function checkedPaymentEvent(
  type: PaymentEventType,
  data: unknown,
  logger: Logger,
): OutboxEvent | undefined {
  const check = checkerOf(type);
  if (!check?.Check(data)) {
    const problem = check?.Errors(data).First();
    logger.error(
      { type, data, problem: problem && `${problem.path}: ${problem.message}` },
      "payment event does not match its schema; not written",
    );
    return undefined;
  }
  return { stream: "PAYMENTS", source: SERVICE_NAME, type, data };
}

/**
 * Writes each event to the outbox, checked against the catalog. The human-proof events go with the nonce and
 * quota they describe (`GatewayHumanProofStore`); these are the others, which share no transaction with a
 * state change of ours (a settlement is on chain), and the human-proof ones when the quota lives in memory.
 * `emit` resolves once the row is committed, so a caller that awaits it (settlement, before the response) loses
 * nothing to a crash; events raised through the SDK's synchronous `onEvent` are written in the background and
 * `drain` (at shutdown) waits for them. A write that fails is logged and does not fail the payment it describes.
 *
 * Events emitted while a write is in flight go together in the next one (group commit): one statement and one
 * commit for the requests settling at once, instead of one each. Each row keeps its own request's trace context.
 */
export function outboxPaymentEvents(
  db: Kysely<any>,
  topology: Topology,
  logger: Logger,
  outboxCommitted: () => void = () => {},
): Required<PaymentEvents> {
  const writer = groupWriter<{ row: OutboxRow; type: PaymentEventType }>(async (events) => {
    try {
      await writeOutboxRows(
        db,
        events.map((e) => e.row),
      );
      outboxCommitted();
    } catch (error) {
      logger.error(
        { err: error, types: events.map((e) => e.type) },
        "payment events could not be written to the outbox",
      );
    }
  });

  return {
    emit(type, data) {
      const event = checkedPaymentEvent(type, data, logger);
      if (!event) return Promise.resolve();
      // The row is made now, so that it carries the trace context of the request that emits it.
      const [row] = outboxRows(topology, [event]);
      return writer.add({ row: row!, type });
    },
    drain: () => writer.idle(),
  };
}
