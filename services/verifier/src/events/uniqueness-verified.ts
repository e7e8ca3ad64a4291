import type { Kysely, Transaction } from "@humanpass/db";
import { enqueue, type Topology, type UniquenessVerifiedData } from "@humanpass/event-bus";

export const EVENT_SOURCE = "verifier";

export async function enqueueUniquenessVerified(
  trx: Transaction<any> | Kysely<any>,
  topology: Topology,
  data: UniquenessVerifiedData,
): Promise<void> {
  await enqueue(trx, topology, {
    stream: "VERIFIER",
    source: EVENT_SOURCE,
    type: "uniqueness_verified",
    subject: String(data.sessionId),
    data,
  });
}
