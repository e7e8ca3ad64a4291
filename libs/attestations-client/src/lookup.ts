import type { AttestationsClient, RecipientFilter } from "./client.ts";
import { type OwnershipRecord, parseOwnershipRecord } from "./records.ts";

/** Who stands behind an agent, from its most recent listed ownership attestation and its human's nullifier. */
export type HumanResolution = {
  /** The human's nullifier (decimal string): stable per person, the key for per-human quotas. */
  humanId: string;
  /** ISO 8601 time of the ownership attestation. */
  verifiedAt: string;
  attestationId: string;
  humanDid: string;
  /** The attestation's `fromEthereumAddress`; may be a relay, never identify the person by it. */
  humanAddress: string;
  agentDid: string;
  agentAddress: string;
};

/**
 * Each method returns the human, or null when the registry says the agent is not paired (no listed ownership
 * record, or no nullifier for its human); it throws `AttestationsApiError` when the registry cannot be read.
 */
export interface HumanLookup {
  /** The most recent ownership record listed for the agent DID. */
  byDid(did: string): Promise<HumanResolution | null>;
  /** Records listed for the address whose `toEthereumAddress` is that address (spec 3, direct path). */
  byAddress(address: string): Promise<HumanResolution | null>;
}

export function createHumanLookup(client: AttestationsClient, ownershipSchema: string): HumanLookup {
  async function resolve(filter: RecipientFilter, matches: (r: OwnershipRecord) => boolean) {
    const records = (await client.listAttestations(ownershipSchema, filter))
      .map(parseOwnershipRecord)
      .filter(matches);
    const latest = records.sort((a, b) => b.creationTime - a.creationTime)[0];
    if (!latest) return null;
    const humanId = await client.nullifier(latest.fromId);
    if (humanId === null) return null;
    return {
      humanId,
      verifiedAt: new Date(latest.creationTime * 1000).toISOString(),
      attestationId: latest.id,
      humanDid: latest.fromDid,
      humanAddress: latest.fromEthereumAddress,
      agentDid: latest.toDid,
      agentAddress: latest.toEthereumAddress,
    };
  }

  return {
    byDid: (did) => resolve({ recipientDid: did }, () => true),
    byAddress(address) {
      const wanted = address.toLowerCase();
      return resolve(
        { recipientEthereumAddress: address },
        (r) => r.toEthereumAddress.toLowerCase() === wanted,
      );
    },
  };
}
