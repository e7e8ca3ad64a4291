import { createHash } from "node:crypto";
import { createDb } from "@humanpass/db";
import type { Identity } from "@humanpass/devnet";
import { createSession, recordVerification, SCHEMA, type VerifierDatabase } from "@humanpass/verifier";

/**
 * Records demo humans as verified through the verifier's own write path (session, nullifier row and
 * `uniqueness_verified` outbox event in one transaction), as a wallet's callback would, minus the zero-knowledge
 * proof that no wallet can make offline. Each human's nullifier is derived from its DID, so re-running is a no-op.
 */
export async function recordDemoHumans(options: {
  databaseUrl: string;
  prefix: string;
  nullifierSessionId: string;
  humans: Identity[];
}): Promise<{ did: string; userId: string; nullifier: string }[]> {
  const db = createDb<VerifierDatabase>({
    connectionString: options.databaseUrl,
    schema: SCHEMA,
    max: 2,
  });
  try {
    const recorded = [];
    for (const human of options.humans) {
      const nullifier = (
        BigInt(`0x${createHash("sha256").update(`demo nullifier ${human.did}`).digest("hex")}`) %
        21888242871839275222246405745257275088548364400416034343698204186575808495617n
      ).toString();
      const now = new Date();
      const { sessionId } = await createSession(db, {
        createdAt: now,
        expiresAt: new Date(now.getTime() + 60_000),
        request: (id) =>
          ({ id: String(id), typ: "demo", type: "demo", thid: String(id), body: { scope: [] } }) as never,
      });
      await recordVerification(
        db,
        { prefix: options.prefix },
        {
          sessionId: BigInt(sessionId),
          now,
          proof: {
            nullifier,
            nullifierSessionId: options.nullifierSessionId,
            userDid: human.did,
            userId: human.iden3Id.toString(),
          },
        },
      );
      recorded.push({ did: human.did, userId: human.iden3Id.toString(), nullifier });
    }
    return recorded;
  } finally {
    await db.destroy();
  }
}
