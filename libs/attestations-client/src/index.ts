export { HumanCache, type HumanCacheOptions, type Revocation } from "./cache.ts";
export {
  type AttestationsClient,
  type AttestationsClientOptions,
  type AttestationsEndpoints,
  createAttestationsClient,
  endpointsOf,
  type RecipientFilter,
} from "./client.ts";
export { AttestationsApiError } from "./errors.ts";
export { createHumanLookup, type HumanLookup, type HumanResolution } from "./lookup.ts";
export { OwnershipRecord, parseOwnershipRecord } from "./records.ts";
