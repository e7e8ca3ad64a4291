import {
  type AttestationsClient,
  createAttestationsClient,
  endpointsOf,
} from "@humanpass/attestations-client";
import { DEFAULT_ATTESTATIONS_API_BASE_URL, DEFAULT_NULLIFIER_API_BASE_URL } from "./constants.ts";

/** Where the SDK finds the attestations API (spec 2) and how patiently it asks. */
export type AttestationsApiOptions = {
  /**
   * The attestations API's origin, e.g. `http://attestations-api:8081` (no `/api/v1`): the SDK appends
   * `/api/v1/attestations` and `/api/v1/nullifier`. The meaning `ATTESTATIONS_API_URL` has in every humanpass service.
   */
  attestationsApiUrl?: string;
  /** Billions' option: the attestations list endpoint itself (`…/api/v1/attestations`); wins over `attestationsApiUrl`. */
  attestationsApiBaseUrl?: string;
  /** Billions' option: the nullifier endpoint itself (`…/api/v1/nullifier`); wins over `attestationsApiUrl`. */
  nullifierApiBaseUrl?: string;
  /** Per HTTP attempt. Default 5000 ms. */
  requestTimeoutMs?: number;
  /** Extra attempts after a 502, 503, 504, a timeout or a network failure. Default 2. */
  retries?: number;
};

/** The client for these options; Billions' production API when none names one. */
export function attestationsClient(options: AttestationsApiOptions): AttestationsClient {
  const origin = options.attestationsApiUrl
    ? endpointsOf(options.attestationsApiUrl)
    : { attestations: DEFAULT_ATTESTATIONS_API_BASE_URL, nullifier: DEFAULT_NULLIFIER_API_BASE_URL };
  return createAttestationsClient({
    url: {
      attestations: options.attestationsApiBaseUrl || origin.attestations,
      nullifier: options.nullifierApiBaseUrl || origin.nullifier,
    },
    timeoutMs: options.requestTimeoutMs,
    retries: options.retries,
  });
}
