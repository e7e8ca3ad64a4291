export { HUMAN_PROOF_STORE_SQL, migrateHumanProofStore, type Queryable, USED_NONCES_SQL } from "./schema.ts";
export {
  type AdmissionEventsWriter,
  PostgresHumanProofStore,
  type PostgresHumanProofStoreOptions,
} from "./store.ts";
export { PostgresUsedNonceStore } from "./used-nonces.ts";
