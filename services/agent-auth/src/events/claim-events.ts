import type { Kysely, Transaction } from "@humanpass/db";
import {
  type ClaimAcceptedData,
  enqueue,
  type HumanNotRegisteredData,
  type HumanVerifiedData,
  type OutboxEvent,
  type Topology,
} from "@humanpass/event-bus";

export const SOURCE = "agent-auth";

/** Outbox writes of this service's events, inside the caller's transaction when it passes one. */
export interface ClaimEvents {
  /** `human_verified`, then `claim_accepted` when the claim was recorded, in one outbox write. */
  verified(
    db: Transaction<any> | Kysely<any>,
    verified: HumanVerifiedData,
    accepted?: ClaimAcceptedData,
  ): Promise<void>;
  humanNotRegistered(db: Transaction<any> | Kysely<any>, data: HumanNotRegisteredData): Promise<void>;
}

export function claimEvents(topology: Topology): ClaimEvents {
  const event = (type: string, subject: string, data: unknown): OutboxEvent => ({
    stream: "AGENT_AUTH",
    source: SOURCE,
    type,
    subject,
    data,
  });
  return {
    async verified(db, verified, accepted) {
      const events = [event("human_verified", verified.agentDid ?? verified.humanDid, verified)];
      if (accepted) events.push(event("claim_accepted", accepted.agentDid, accepted));
      await enqueue(db, topology, events);
    },
    async humanNotRegistered(db, data) {
      await enqueue(db, topology, event("human_not_registered", data.did, data));
    },
  };
}
