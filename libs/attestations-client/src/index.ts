export { HumanCache, type HumanCacheOptions, type Revocation } from "./cache";
export {
  type AttestationsClient,
  type AttestationsClientOptions,
  type AttestationsEndpoints,
  createAttestationsClient,
  endpointsOf,
  type RecipientFilter,
} from "./client";
export { AttestationsApiError } from "./errors";
export { createHumanLookup, type HumanLookup, type HumanResolution } from "./lookup";
export { OwnershipRecord, parseOwnershipRecord } from "./records";
