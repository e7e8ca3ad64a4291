import { type Migration, sql } from "@humanpass/db";
import { USED_NONCES_SQL } from "@humanpass/human-proof/postgres";

/**
 * Nonces are no longer stored at issue (they carry their issue time and a MAC): only redeemed ones are, in the
 * SDK's `used_proof_nonces`. The `nonces` table of 0002 is what the previous release reads; its removal is the
 * next release's contract step.
 */
export const usedNoncesMigration: Migration = {
  async up(db) {
    await sql.raw(USED_NONCES_SQL).execute(db);
  },
};
