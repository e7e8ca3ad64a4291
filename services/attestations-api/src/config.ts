import { Env } from "@humanpass/config";
import { Type } from "@sinclair/typebox";

/** The service's own variables; DATABASE_URL, NATS_URL, CORS_ORIGINS, RATE_LIMIT_* come from the common set. */
export const AttestationsApiEnv = Type.Object({
  PORT: Env.port(8081),
  HOST: Type.String({ default: "0.0.0.0", description: "the address to listen on" }),
  TRUST_PROXY: Env.boolean(false),
  RATE_LIMIT_ENABLED: Env.boolean(true),
  CHAIN_DURABLE: Type.String({
    default: "attestations-api-chain",
    pattern: "^[A-Za-z0-9_-]+$",
    description: "a JetStream durable name",
  }),
  VERIFIER_DURABLE: Type.String({
    default: "attestations-api-verifier",
    pattern: "^[A-Za-z0-9_-]+$",
    description: "a JetStream durable name",
  }),
});

export const SERVICE_NAME = "attestations-api";
export const SCHEMA = "attestations";
