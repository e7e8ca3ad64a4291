import type { Transaction } from "@humanpass/db";
import {
  type ClaimAcceptedData,
  enqueue,
  type HumanNotRegisteredData,
  type HumanVerifiedData,
  type Topology,
} from "@humanpass/events";
import { SCHEMA } from "../db/schema";

export const SOURCE = "agent-auth";

/** Outbox writes of this service's events; each runs inside the caller's transaction. */
export interface ClaimEvents {
  humanVerified(trx: Transaction<any>, data: HumanVerifiedData): Promise<void>;
  humanNotRegistered(trx: Transaction<any>, data: HumanNotRegisteredData): Promise<void>;
  claimAccepted(trx: Transaction<any>, data: ClaimAcceptedData): Promise<void>;
}

export function claimEvents(topology: Topology): ClaimEvents {
  const write = async (trx: Transaction<any>, type: string, subject: string, data: unknown) => {
    await enqueue(trx, topology, SCHEMA, { stream: "AGENT_AUTH", source: SOURCE, type, subject, data });
  };
  return {
    humanVerified: (trx, data) => write(trx, "human_verified", data.agentDid ?? data.humanDid, data),
    humanNotRegistered: (trx, data) => write(trx, "human_not_registered", data.did, data),
    claimAccepted: (trx, data) => write(trx, "claim_accepted", data.agentDid, data),
  };
}
