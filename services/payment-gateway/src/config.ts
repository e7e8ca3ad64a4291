import { ConfigError, Env, nonceKeysProblem } from "@humanpass/config";
import { DEFAULT_AGENT_OWNERSHIP_SCHEMA } from "@humanpass/human-proof";
import { Type } from "@sinclair/typebox";

export const SERVICE_NAME = "payment-gateway";
export const SCHEMA = "payment_gateway";

const Address = Type.String({
  pattern: "^0x[0-9a-fA-F]{40}$",
  description: "an EVM address (0x and 40 hex digits)",
});
const PrivateKey = Type.String({
  pattern: "^0x[0-9a-fA-F]{64}$",
  description: "a private key (0x and 64 hex digits)",
});

/** The service's own variables (spec 3: EVM_ADDRESS, FACILITATOR_URL, MOCK_FACILITATOR, PORT) and ours. */
export const PaymentGatewayEnv = Type.Object({
  NODE_ENV: Type.String({ default: "development", description: "development, test or production" }),
  PORT: Env.port(4021),
  PUBLIC_URL: Env.url("http://localhost:4021"),
  HUMAN_PROOF_NONCE_KEYS: Env.nonceKeys(),
  EVM_ADDRESS: Address,
  FACILITATOR_URL: Type.Optional(
    Type.String({
      pattern: "^(https?://.+|local)$",
      description:
        "the facilitator's URL, or `local` for x402's facilitator in this process (FACILITATOR_RPC_URL, FACILITATOR_PRIVATE_KEY)",
    }),
  ),
  MOCK_FACILITATOR: Env.boolean(false),
  FACILITATOR_RPC_URL: Type.Optional(Env.url()),
  FACILITATOR_PRIVATE_KEY: Type.Optional(PrivateKey),
  ROUTES_FILE: Type.String({
    default: new URL("../config/routes.json", import.meta.url).pathname,
    description: "path of the JSON file with the paid routes",
  }),
  ATTESTATIONS_API_URL: Env.url("http://127.0.0.1:8081"),
  ATTESTATIONS_API_TIMEOUT_MS: Type.Integer({
    minimum: 1,
    default: 5_000,
    description: "an integer >= 1 (milliseconds per request)",
  }),
  ATTESTATIONS_API_RETRIES: Type.Integer({
    minimum: 0,
    maximum: 5,
    default: 2,
    description: "an integer 0-5 (extra attempts after a 502, 503, 504, a timeout or a network failure)",
  }),
  AGENT_OWNERSHIP_SCHEMA: Type.String({
    default: DEFAULT_AGENT_OWNERSHIP_SCHEMA,
    pattern: "^0x[0-9a-fA-F]{64}$",
    description: "a schema id (0x and 64 hex digits)",
  }),
  /** Where per-human counters and used proof nonces live; `memory` is refused when NODE_ENV=production. */
  USAGE_STORAGE: Type.Union([Type.Literal("postgres"), Type.Literal("memory")], {
    default: "postgres",
    description: "postgres or memory",
  }),
  LOOKUP_CACHE_TTL_MS: Type.Integer({
    minimum: 0,
    default: 60_000,
    description: "an integer >= 0 (ms a found human is reused; 0 turns the cache off)",
  }),
  NEGATIVE_LOOKUP_CACHE_TTL_MS: Type.Integer({
    minimum: 0,
    default: 5_000,
    description: "an integer >= 0 (ms an agent found unpaired is not looked up again; 0 turns it off)",
  }),
  MAX_PROOF_AGE_SECONDS: Type.Integer({
    minimum: 1,
    default: 300,
    description: "an integer >= 1 (seconds a human-proof challenge nonce is accepted after its issue)",
  }),
  PAYWALL_HTML_FILE: Type.Optional(Type.String({ description: "path of an HTML page for unpaid browsers" })),
  RATE_LIMIT_ENABLED: Env.boolean(true),
});

export interface FacilitatorSettings {
  NODE_ENV: string;
  FACILITATOR_URL?: string;
  MOCK_FACILITATOR: boolean;
  FACILITATOR_RPC_URL?: string;
  FACILITATOR_PRIVATE_KEY?: string;
  USAGE_STORAGE: "postgres" | "memory";
  HUMAN_PROOF_NONCE_KEYS?: string;
}

/** Rules between variables that a per-variable schema cannot state; each problem names its variable. */
export function checkSettings(config: FacilitatorSettings): void {
  const problems: { variable: string; message: string }[] = [];
  const production = config.NODE_ENV === "production";
  if (config.MOCK_FACILITATOR) {
    if (production)
      problems.push({ variable: "MOCK_FACILITATOR", message: "must not be true when NODE_ENV=production" });
  } else if (!config.FACILITATOR_URL) {
    problems.push({
      variable: "FACILITATOR_URL",
      message: "is required (a facilitator URL, or local) unless MOCK_FACILITATOR=true",
    });
  } else if (config.FACILITATOR_URL === "local") {
    if (!config.FACILITATOR_RPC_URL)
      problems.push({ variable: "FACILITATOR_RPC_URL", message: "is required when FACILITATOR_URL=local" });
    if (!config.FACILITATOR_PRIVATE_KEY)
      problems.push({
        variable: "FACILITATOR_PRIVATE_KEY",
        message: "is required when FACILITATOR_URL=local",
      });
  }
  if (production && config.USAGE_STORAGE === "memory") {
    problems.push({
      variable: "USAGE_STORAGE",
      message:
        "memory keeps quotas in one process and loses them on restart; it is refused when NODE_ENV=production",
    });
  }
  const nonceKeys = nonceKeysProblem(config);
  if (nonceKeys) problems.push(nonceKeys);
  if (problems.length > 0) throw new ConfigError(problems);
}
