import { ConfigError, Env, splitList } from "@humanpass/config";
import { Type } from "@sinclair/typebox";
import { networksBeyondPrivate } from "./delivery/address-policy.ts";

/**
 * Admin tokens published in this repository (`make up`, docker-compose.yml, the k8s dev overlay): anyone can
 * read them, so they are refused when NODE_ENV=production.
 */
export const DEVELOPMENT_ADMIN_TOKENS = [
  "development-only-webhooks-admin-token-0001",
  "dev-only-webhooks-admin-token-not-a-secret",
];

/** The service's own environment variables (the common ones come from `@humanpass/service`). */
export const WebhooksEnv = Type.Object({
  NODE_ENV: Type.String({
    default: "development",
    description:
      "development, test or production: production refuses a development ADMIN_TOKEN and WEBHOOK_ALLOWED_NETWORKS beyond private networks",
  }),
  PORT: Env.port(8084),
  ADMIN_TOKEN: Type.String({
    minLength: 32,
    description:
      "the admin API's bearer token, at least 32 characters (a published development token is refused when NODE_ENV=production)",
  }),
  WEBHOOK_ALLOWED_NETWORKS: Env.addressList(
    "comma-separated addresses and CIDRs reached although not public (plain http is accepted only there); when NODE_ENV=production each must lie within private, loopback or link-local ranges. Cloud metadata addresses are refused whatever this says",
  ),
  WEBHOOK_RETRY_WINDOW_MS: Type.Integer({
    minimum: 86_400_000,
    default: 90_000_000,
    description: "an integer >= 86400000 (ms): how long a delivery is retried before it is dead-lettered",
  }),
  WEBHOOK_TIMEOUT_MS: Type.Integer({
    minimum: 1,
    default: 10_000,
    description:
      "an integer >= 1 (ms): the whole attempt (connection, answer and its body); the connection is closed then",
  }),
  WEBHOOK_CONCURRENCY: Type.Integer({
    minimum: 1,
    default: 32,
    description: "an integer >= 1: attempts in flight at once per replica",
  }),
  WEBHOOK_ENDPOINT_CONCURRENCY: Type.Integer({
    minimum: 1,
    default: 8,
    description:
      "an integer >= 1: attempts in flight at once to one endpoint, over all replicas, so a slow or silent receiver holds no more than this many of the slots",
  }),
  WEBHOOK_IDLE_MS: Type.Integer({
    minimum: 1,
    default: 200,
    description:
      "an integer >= 1 (ms): how long a replica waits before it looks again when nothing more was due",
  }),
});

export interface WebhooksSettings {
  NODE_ENV: string;
  ADMIN_TOKEN: string;
  WEBHOOK_ALLOWED_NETWORKS: string;
}

/** Rules between variables a per-variable schema cannot state; each problem names its variable. */
export function checkSettings(config: WebhooksSettings): void {
  const problems: { variable: string; message: string }[] = [];
  if (config.NODE_ENV === "production") {
    if (DEVELOPMENT_ADMIN_TOKENS.includes(config.ADMIN_TOKEN))
      problems.push({
        variable: "ADMIN_TOKEN",
        message:
          "is a development token published in this repository; it is refused when NODE_ENV=production",
      });
    const wide = networksBeyondPrivate(splitList(config.WEBHOOK_ALLOWED_NETWORKS));
    if (wide.length > 0)
      problems.push({
        variable: "WEBHOOK_ALLOWED_NETWORKS",
        message: `${wide.join(", ")}: wider than private, loopback and link-local networks, refused when NODE_ENV=production (list the networks of your own receivers)`,
      });
  }
  if (problems.length > 0) throw new ConfigError(problems);
}
