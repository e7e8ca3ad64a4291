import { type Kysely, sql } from "@humanpass/db";
import type { HumanResolution } from "@humanpass/human-proof";
import type { AgentAuthDb, ClaimPath } from "../db/schema";
import type { ClaimEvents } from "../events/claim-events";

export interface ClaimRecorder {
  /**
   * Records a claim by a verified agent together with its events, in one transaction. Under the
   * one-claim-per-human policy a second claim of the same human (through any agent) is not recorded:
   * `already_claimed`.
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
  options: { resource: string; oneClaimPerHuman: boolean },
): ClaimRecorder {
  const { resource, oneClaimPerHuman } = options;
  return {
    async accept({ path, agentDid, agentAddress, resolution }) {
      return db.transaction().execute(async (trx) => {
        const { humanId, humanDid, verifiedAt } = resolution;
        const inserted = await trx
          .insertInto("claims")
          .values({
            path,
            agent_did: agentDid,
            agent_address: agentAddress,
            human_id: humanId,
            human_did: humanDid,
            resource,
            exclusive: oneClaimPerHuman,
          })
          // The unique index covers exclusive claims only; its predicate must be spelled out for ON CONFLICT.
          .onConflict((oc) => oc.column("human_id").where(sql<boolean>`exclusive`).doNothing())
          .returning("id")
          .executeTakeFirst();
        const verified = { humanId, verifiedAt, humanDid, resource, agentDid };
        const accepted = inserted ? { path, agentDid, agentAddress, humanId, humanDid, resource } : undefined;
        await events.verified(trx, verified, accepted);
        return accepted ? "accepted" : "already_claimed";
      });
    },

    async notRegistered(did) {
      await db.transaction().execute((trx) => events.humanNotRegistered(trx, { did, resource }));
    },
  };
}
