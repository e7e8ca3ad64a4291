export { HUMAN_PROOF_STORE_SQL, migrateHumanProofStore, type Queryable } from "./schema.ts";
export {
  type AdmissionEventsWriter,
  PostgresHumanProofStore,
  type PostgresHumanProofStoreOptions,
} from "./store.ts";
