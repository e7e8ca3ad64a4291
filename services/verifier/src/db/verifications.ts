import type { Kysely } from "@humanpass/db";
import type { Topology } from "@humanpass/event-bus";
import { enqueueUniquenessVerified } from "../events/uniqueness-verified.ts";
import type { VerifiedNullifier } from "../verification/token-verifier.ts";
import type { VerifierDatabase } from "./schema.ts";

export type RecordOutcome = "recorded" | "already_verified" | "session_closed";

/**
 * Steps 6 and 7 of spec 1 in one transaction: the nullifier row (insert-if-absent on its primary key, so two
 * instances racing on one person get exactly one row), the session's move to `success` (only from a live
 * `pending`), and the `uniqueness_verified` outbox event. Anything short of all three rolls back.
 */
export async function recordVerification(
  db: Kysely<VerifierDatabase>,
  topology: Topology,
  input: { sessionId: bigint; proof: VerifiedNullifier; now: Date },
): Promise<RecordOutcome> {
  const { sessionId, proof, now } = input;
  return db
    .transaction()
    .execute(async (trx) => {
      const inserted = await trx
        .insertInto("nullifiers")
        .values({
          nullifier_session_id: proof.nullifierSessionId,
          nullifier: proof.nullifier,
          session_id: sessionId.toString(),
          user_did: proof.userDid,
          user_id: proof.userId,
          verified_at: now,
        })
        .onConflict((oc) => oc.columns(["nullifier_session_id", "nullifier"]).doNothing())
        .returning("nullifier")
        .executeTakeFirst();
      if (!inserted) return "already_verified" as const;
      const updated = await trx
        .updateTable("sessions")
        .set({ status: "success", verified_at: now })
        .where("session_id", "=", sessionId.toString())
        .where("status", "=", "pending")
        .where("expires_at", ">", now)
        .returning("session_id")
        .executeTakeFirst();
      if (!updated) throw new SessionClosed();
      await enqueueUniquenessVerified(trx, topology, {
        sessionId: Number(sessionId),
        nullifier: proof.nullifier,
        nullifierSessionId: proof.nullifierSessionId,
        userDid: proof.userDid,
        userId: proof.userId,
        verifiedAt: now.toISOString(),
      });
      return "recorded" as const;
    })
    .catch((error: unknown) => {
      if (error instanceof SessionClosed) return "session_closed" as const;
      throw error;
    });
}

/** Rolls the transaction back when the session is no longer pending (expired, or another token won it). */
class SessionClosed extends Error {}
