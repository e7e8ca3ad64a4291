import { AttestationsApiError } from "@humanpass/attestations-client";
import { type AttestationsApiOptions, attestationsClient } from "../common/attestations.ts";

export type CheckAttestationOptions = Pick<
  AttestationsApiOptions,
  "attestationsApiUrl" | "attestationsApiBaseUrl" | "requestTimeoutMs" | "retries"
>;

/**
 * Whether `did` holds a non-revoked attestation of `schemaId`. False also when the API answers with an
 * error status or a malformed body (so false is ambiguous); throws only when the API cannot be reached in
 * time. It does not prove control of the DID: call it only with a DID you already trust, e.g. your own.
 */
export async function checkAttestation(
  did: string,
  schemaId: string,
  options: CheckAttestationOptions = {},
): Promise<boolean> {
  try {
    return await attestationsClient(options).hasAttestation(schemaId, { recipientDid: did });
  } catch (error) {
    if (error instanceof AttestationsApiError && error.answered) return false;
    throw error;
  }
}
