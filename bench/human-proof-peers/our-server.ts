// The peer bench's server (b): our SDK on Express as docs/sdk.md wires it for several instances
// (`PublicHTTPResourceServer` under x402's `paymentMiddlewareFromHTTPServer`, `PostgresHumanProofStore` as
// admissions and payment reservations, shared challenge-nonce keys), its verifier asking the attestations API
// with the SDK's defaults (no lookup cache). The store lives in its own schema of the run's database.
import { migrateHumanProofStore, PostgresHumanProofStore } from "@humanpass/human-proof/postgres";
import {
  configureHumanProofServer,
  createChallengeNonces,
  DEFAULT_AGENT_OWNERSHIP_SCHEMA,
  declareHumanProofExtension,
  HumanProofResourceServer,
  PublicHTTPResourceServer,
} from "@humanpass/human-proof/server";
import { ExactEvmScheme } from "@x402/evm/exact/server";
import { paymentMiddlewareFromHTTPServer } from "@x402/express";
import pg from "pg";
import { benchRoutes, env, facilitator, listen } from "./express-app.ts";

const SCHEMA = "human_proof_peer";
const setup = new pg.Client({ connectionString: process.env.DATABASE_URL });
await setup.connect();
await setup.query(`create schema if not exists ${SCHEMA}`);
await setup.end();
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, options: `-c search_path=${SCHEMA}` });
pool.on("error", (error) => console.warn("postgres connection lost:", error.message));
await migrateHumanProofStore(pool);
const store = new PostgresHumanProofStore(pool);

const challengeNonces = createChallengeNonces({ keys: [env.nonceKey] });
const server = new HumanProofResourceServer(facilitator).register(env.network, new ExactEvmScheme());
configureHumanProofServer(server, {
  verifierOptions: { attestationsApiUrl: env.attestationsApiUrl },
  admissions: store,
  paymentGuards: { reservations: store },
  challengeNonces,
});
const routes = benchRoutes(
  DEFAULT_AGENT_OWNERSHIP_SCHEMA,
  declareHumanProofExtension({ expirationSeconds: 900 }),
);
const httpServer = new PublicHTTPResourceServer(server, routes, { publicUrl: env.publicUrl });
await listen(paymentMiddlewareFromHTTPServer(httpServer));
