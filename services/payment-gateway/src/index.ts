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
export { migrations } from "./db/migrations/index.ts";
