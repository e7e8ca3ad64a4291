import { AttestationsApiError, hasListedAttestation } from "../shared/attestations-api";
import { DEFAULT_ATTESTATIONS_API_BASE_URL, DEFAULT_REQUEST_TIMEOUT_MS } from "../shared/constants";

export type CheckAttestationOptions = {
  /** URL of the attestations list endpoint (…/api/v1/attestations). */
  attestationsApiBaseUrl?: string;
  requestTimeoutMs?: number;
};

/**
 * Whether `did` holds a non-revoked attestation of `schemaId`. False also when the API answers with an
 * error status or a malformed body (so false is ambiguous); throws only when the API cannot be reached in
 * time. It does not prove control of the DID: call it only with a DID you already trust, e.g. your own.
 */
export async function checkAttestation(
  did: string,
  schemaId: string,
  options?: CheckAttestationOptions,
): Promise<boolean> {
  try {
    return await hasListedAttestation(
      options?.attestationsApiBaseUrl || DEFAULT_ATTESTATIONS_API_BASE_URL,
      schemaId,
      did,
      options?.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    );
  } catch (error) {
    if (error instanceof AttestationsApiError && error.answered) return false;
    throw error;
  }
}
