import type { Kysely } from "@humanpass/db";
import type { HumanResolution } from "@humanpass/human-proof";
import type { AgentAuthDb, ClaimPath } from "../db/schema.ts";
import type { ClaimEvents } from "../events/claim-events.ts";

export interface ClaimRecorder {
  /**
   * Records a claim by a verified agent with its events. Under the one-claim-per-human policy the human is
   * stored under a unique key in the same transaction as the events, and a second claim of the same human
   * (through any agent) is `already_claimed`.
   */
  accept(claim: VerifiedClaim): Promise<"accepted" | "already_claimed">;
  /** Records that the agent behind a valid signature has no verified human. */
  notRegistered(did: string): Promise<void>;
}

export interface VerifiedClaim {
  path: ClaimPath;
  agentDid: string;
  agentAddress: string;
  resolution: HumanResolution;
}

export function createClaimRecorder(
  db: Kysely<AgentAuthDb>,
  events: ClaimEvents,
  options: { resource: string; oneClaimPerHuman: boolean; outboxCommitted?: () => void },
): ClaimRecorder {
  const { resource, oneClaimPerHuman } = options;
  const committed = options.outboxCommitted ?? (() => {});
  return {
    async accept(claim) {
      const outcome = await record(claim);
      committed();
      return outcome;
    },

    async notRegistered(did) {
      await events.humanNotRegistered(db, { did, resource });
      committed();
    },
  };

  async function record({ path, agentDid, agentAddress, resolution }: VerifiedClaim) {
    const { humanId, humanDid, verifiedAt } = resolution;
    const verified = { humanId, verifiedAt, humanDid, resource, agentDid };
    const accepted = { path, agentDid, agentAddress, humanId, humanDid, resource };
    // Without the policy the events are the whole record: one outbox write is its own transaction.
    if (!oneClaimPerHuman) {
      await events.verified(db, verified, accepted);
      return "accepted" as const;
    }
    return db.transaction().execute(async (trx) => {
      const inserted = await trx
        .insertInto("human_claims")
        .values({
          human_id: humanId,
          path,
          agent_did: agentDid,
          agent_address: agentAddress,
          human_did: humanDid,
        })
        .onConflict((oc) => oc.column("human_id").doNothing())
        .returning("human_id")
        .executeTakeFirst();
      await events.verified(trx, verified, inserted ? accepted : undefined);
      return inserted ? ("accepted" as const) : ("already_claimed" as const);
    });
  }
}
