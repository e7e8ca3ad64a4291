import type { HumanResolution } from "@humanpass/human-proof";
import { type AttestationsApiClient, type OwnershipFilter, VerificationUnavailableError } from "./api-client";

/**
 * Who stands behind an agent. Each method returns the human, or null when the registry says the agent is not
 * paired (no listed ownership record, or no nullifier for its human); it throws `VerificationUnavailableError`
 * when the registry cannot be read.
 */
export interface HumanResolver {
  /** Direct path (spec 3, steps 3-5): records listed for the address whose `toEthereumAddress` is that address. */
  byAddress(address: string): Promise<HumanResolution | null>;
  /** Helper path (`PoUVerifier.lookupHuman`): the most recent record listed for the DID. */
  byDid(did: string): Promise<HumanResolution | null>;
}

type OwnershipRecord = {
  id: string;
  creationTime: number;
  fromId: string;
  fromDid: string;
  toDid: string;
  fromEthereumAddress: string;
  toEthereumAddress: string;
};

function asOwnershipRecord(item: unknown): OwnershipRecord {
  const r = item as Partial<OwnershipRecord> | null;
  const strings = [r?.id, r?.fromId, r?.fromDid, r?.toDid, r?.fromEthereumAddress, r?.toEthereumAddress];
  if (
    !r ||
    typeof r !== "object" ||
    typeof r.creationTime !== "number" ||
    !strings.every((s) => typeof s === "string")
  ) {
    throw new VerificationUnavailableError("attestations API sent an attestation with missing fields");
  }
  if (!/^[0-9]+$/.test(r.fromId!))
    throw new VerificationUnavailableError("attestations API sent a non-decimal fromId");
  return r as OwnershipRecord;
}

export function createHumanResolver(api: AttestationsApiClient, ownershipSchema: string): HumanResolver {
  async function resolve(filter: OwnershipFilter, matches: (r: OwnershipRecord) => boolean) {
    const records = (await api.listAttestations(ownershipSchema, filter))
      .map(asOwnershipRecord)
      .filter(matches);
    const latest = records.sort((a, b) => b.creationTime - a.creationTime)[0];
    if (!latest) return null;
    const humanId = await api.nullifier(latest.fromId);
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
    byAddress(address) {
      const wanted = address.toLowerCase();
      return resolve(
        { recipientEthereumAddress: address },
        (r) => r.toEthereumAddress.toLowerCase() === wanted,
      );
    },
    byDid(did) {
      return resolve({ recipientDid: did }, () => true);
    },
  };
}
