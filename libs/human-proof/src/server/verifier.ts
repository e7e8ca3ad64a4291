import {
  AttestationsApiError,
  getJson,
  hasListedAttestation,
  listAttestations,
} from "../shared/attestations-api";
import {
  DEFAULT_AGENT_OWNERSHIP_SCHEMA,
  DEFAULT_ATTESTATIONS_API_BASE_URL,
  DEFAULT_NULLIFIER_API_BASE_URL,
  DEFAULT_REQUEST_TIMEOUT_MS,
} from "../shared/constants";
import type { HumanResolution, PoUVerifier, PoUVerifierOptions } from "./types";

type OwnershipRecord = {
  id: string;
  creationTime: number;
  fromId?: unknown;
  fromDid: string;
  toDid: string;
  fromEthereumAddress: string;
  toEthereumAddress: string;
};

const RECORD_STRINGS = ["id", "fromDid", "toDid", "fromEthereumAddress", "toEthereumAddress"] as const;

function asOwnershipRecord(item: unknown): OwnershipRecord {
  const record = item as Record<string, unknown> | null;
  const wellFormed =
    !!record &&
    typeof record === "object" &&
    Number.isFinite(record.creationTime) &&
    RECORD_STRINGS.every((field) => typeof record[field] === "string");
  // A record we cannot read means "cannot tell", never "not registered".
  if (!wellFormed) throw new AttestationsApiError("attestations API sent a malformed attestation");
  return record as unknown as OwnershipRecord;
}

async function fetchNullifier(baseUrl: string, userId: string, timeoutMs: number): Promise<string | null> {
  const url = new URL(baseUrl);
  url.searchParams.set("userId", userId);
  let body: { nullifier?: unknown } | null;
  try {
    body = (await getJson(url, timeoutMs)) as { nullifier?: unknown } | null;
  } catch (error) {
    // 404 is the API's answer "no uniqueness verification known for this person": no nullifier resolves.
    if (error instanceof AttestationsApiError && error.status === 404) return null;
    throw error;
  }
  const nullifier = body && typeof body === "object" ? body.nullifier : undefined;
  return typeof nullifier === "string" && nullifier !== "" ? nullifier : null;
}

/**
 * Resolves an agent DID to its human through the attestations API: the most recent ownership record,
 * then that record's `fromId` through the nullifier endpoint. Any error status, timeout or network failure
 * throws (it means "cannot tell", never "not registered").
 */
export function createPoUVerifier(options: PoUVerifierOptions = {}): PoUVerifier {
  const attestationsUrl = options.attestationsApiBaseUrl || DEFAULT_ATTESTATIONS_API_BASE_URL;
  const nullifierUrl = options.nullifierApiBaseUrl || DEFAULT_NULLIFIER_API_BASE_URL;
  const ownershipSchema = options.agentOwnershipSchema || DEFAULT_AGENT_OWNERSHIP_SCHEMA;
  const timeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;

  return {
    ownershipSchema,
    async lookupHuman(did: string): Promise<HumanResolution | null> {
      const records = (await listAttestations(attestationsUrl, ownershipSchema, did, timeoutMs)).map(
        asOwnershipRecord,
      );
      const latest = records.sort((a, b) => b.creationTime - a.creationTime)[0];
      if (!latest || typeof latest.fromId !== "string" || latest.fromId === "") return null;
      const humanId = await fetchNullifier(nullifierUrl, latest.fromId, timeoutMs);
      if (!humanId) return null;
      return {
        humanId,
        verifiedAt: new Date(latest.creationTime * 1000).toISOString(),
        attestationId: latest.id,
        humanDid: latest.fromDid,
        humanAddress: latest.fromEthereumAddress,
        agentDid: latest.toDid,
        agentAddress: latest.toEthereumAddress,
      };
    },
    async hasAttestation(did: string, chainId: string, schema: string): Promise<boolean> {
      if (options.hasAttestation) return options.hasAttestation(did, chainId, schema);
      return hasListedAttestation(attestationsUrl, schema, did, timeoutMs);
    },
  };
}
