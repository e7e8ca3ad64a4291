import { Env } from "@humanpass/config";
import { Type } from "@sinclair/typebox";

/** The service's own environment variables (the common ones come from `@humanpass/service`). */
export const WebhooksEnv = Type.Object({
  PORT: Env.port(8084),
  ADMIN_TOKEN: Type.String({
    minLength: 32,
    description: "the admin API's bearer token, at least 32 characters",
  }),
  WEBHOOK_ALLOWED_NETWORKS: Env.list(""),
  WEBHOOK_RETRY_WINDOW_MS: Type.Integer({
    minimum: 86_400_000,
    default: 90_000_000,
    description: "an integer >= 86400000 (ms): how long a delivery is retried before it is dead-lettered",
  }),
  WEBHOOK_TIMEOUT_MS: Type.Integer({ minimum: 1, default: 10_000, description: "an integer >= 1 (ms)" }),
  WEBHOOK_CONCURRENCY: Type.Integer({ minimum: 1, default: 32, description: "an integer >= 1" }),
  WEBHOOK_IDLE_MS: Type.Integer({
    minimum: 1,
    default: 1_000,
    description: "an integer >= 1 (ms): pause between rounds when nothing was due",
  }),
});
