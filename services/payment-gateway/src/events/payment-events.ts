import type { Kysely } from "@humanpass/db";
import {
  enqueue,
  eventSchema,
  type HumanNotRegisteredData,
  type HumanVerifiedData,
  type MaxUseExceededData,
  type PaymentFailedData,
  type PaymentSettledData,
  type Topology,
} from "@humanpass/events";
import type { Logger } from "@humanpass/telemetry";
import { Value } from "@sinclair/typebox/value";
import { SERVICE_NAME } from "../config";

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

/**
 * Writes each event to the outbox, after checking it against the catalog schema its consumers use. None of them
 * shares a transaction with a state change of ours (a settlement is on chain, a verification changes nothing).
 * `emit` resolves once the row is committed, so a caller that awaits it (settlement, before the response) loses
 * nothing to a crash; events raised through the SDK's synchronous `onEvent` are written in the background and
 * `drain` (at shutdown) waits for them. A write that fails is logged and does not fail the payment it describes.
 */
export function outboxPaymentEvents(
  db: Kysely<any>,
  topology: Topology,
  logger: Logger,
): Required<PaymentEvents> {
  const inFlight = new Set<Promise<void>>();

  async function write(type: PaymentEventType, data: unknown): Promise<void> {
    const schema = eventSchema("PAYMENTS", type);
    if (!schema || !Value.Check(schema, data)) {
      const problem = schema ? [...Value.Errors(schema, data)][0] : undefined;
      logger.error(
        { type, data, problem: problem && `${problem.path}: ${problem.message}` },
        "payment event does not match its schema; not written",
      );
      return;
    }
    try {
      // enqueue captures the caller's trace context before its first await, so the event keeps it.
      await enqueue(db, topology, { stream: "PAYMENTS", source: SERVICE_NAME, type, data });
    } catch (error) {
      logger.error({ err: error, type }, "payment event could not be written to the outbox");
    }
  }

  return {
    async emit(type, data) {
      const writing = write(type, data).finally(() => inFlight.delete(writing));
      inFlight.add(writing);
      await writing;
    },
    async drain() {
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },
  };
}
