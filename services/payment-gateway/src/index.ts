// What other packages may use (deploy validation, benchmarks, tools): the app factory and the configuration the
// service reads. Importing it starts nothing; src/main.ts is the process.
export { type AppDeps, buildApp } from "./app.ts";
export {
  checkSettings,
  type FacilitatorSettings,
  PaymentGatewayEnv,
  SCHEMA,
  SERVICE_NAME,
} from "./config.ts";
// The store of the claims paid requests leave (one row per EIP-3009 authorization): the verifier's Postgres failover
// test counts these rows as it counts nullifiers.
export { GatewayHumanProofStore } from "./db/human-proof-store.ts";
export { migrations } from "./db/migrations/index.ts";
export type { Database as PaymentGatewayDatabase } from "./db/types.ts";
