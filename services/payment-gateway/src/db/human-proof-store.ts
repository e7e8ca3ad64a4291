import { isDatabaseUnavailable, type Pool } from "@humanpass/db";
import { type OutboxEvent, outboxInsert, outboxRows, type Topology } from "@humanpass/event-bus";
import type { AdmissionOutcome, HumanProofEvent, ProofAdmission } from "@humanpass/human-proof";
import { PostgresHumanProofStore } from "@humanpass/human-proof/postgres";
import type { Logger } from "@humanpass/telemetry";
import { checkedPaymentEvent, paymentEventOf } from "../events/payment-events.ts";

/**
 * The SDK's Postgres store with the gateway's outbox: each proof's admission (nonce, use, payment claim) writes
 * its PAYMENTS events in its own statement, through the event bus's outbox insert, so the events exist exactly when
 * the nonce and the use do, in one round trip and one commit. Shared by every gateway instance.
 */
export class GatewayHumanProofStore extends PostgresHumanProofStore {
  private readonly logger: Logger;
  private readonly outboxCommitted: () => void;

  /** `outboxCommitted` wakes this process's outbox relay after an admission that wrote events. */
  constructor(
    pool: Pick<Pool, "query">,
    topology: Topology,
    logger: Logger,
    outboxCommitted: () => void = () => {},
  ) {
    super(pool, {
      events: {
        rows: (events: HumanProofEvent[]) =>
          outboxRows(
            topology,
            events
              .map((event) => {
                const { type, data } = paymentEventOf(event);
                return checkedPaymentEvent(type, data, logger);
              })
              .filter((event): event is OutboxEvent => event !== undefined),
          ),
        insert: outboxInsert,
      },
    });
    this.logger = logger;
    this.outboxCommitted = outboxCommitted;
  }

  override async admit(admission: ProofAdmission): Promise<AdmissionOutcome> {
    try {
      const outcome = await super.admit(admission);
      if (outcome.nonceFresh) this.outboxCommitted();
      return outcome;
    } catch (error) {
      // The human-proof hook turns any failure into a refusal; the reason must reach the operators.
      this.logger.error(
        { err: (error as Error).message, databaseUnavailable: isDatabaseUnavailable(error) },
        "human proof not admitted: its nonce and usage could not be stored",
      );
      throw error;
    }
  }
}
