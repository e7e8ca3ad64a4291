import { Env } from "@humanpass/config";
import { Type } from "@sinclair/typebox";

export const DEFAULT_READ_TIMEOUT_MS = 5_000;

/** The service's own variables; DATABASE_URL, NATS_URL, CORS_ORIGINS, RATE_LIMIT_* come from the common set. */
export const AttestationsApiEnv = Type.Object({
  PORT: Env.port(8081),
  RATE_LIMIT_ENABLED: Env.boolean(true),
  READ_TIMEOUT_MS: Type.Integer({
    minimum: 1,
    default: DEFAULT_READ_TIMEOUT_MS,
    description: "an integer >= 1: how long one read statement may run before it is cancelled (503)",
  }),
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
