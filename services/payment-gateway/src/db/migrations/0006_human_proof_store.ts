import { type Migration, sql } from "@humanpass/db";
import { HUMAN_PROOF_STORE_SQL } from "@humanpass/human-proof/postgres";

/**
 * The SDK's Postgres store completes the tables 0002 and 0003 created (each statement idempotent): the use each
 * proof took (refunds by proof nonce) and the claimant of each payment reservation.
 */
export const humanProofStoreMigration: Migration = {
  async up(db) {
    await sql.raw(HUMAN_PROOF_STORE_SQL).execute(db);
  },
};
