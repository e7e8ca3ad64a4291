import { isIP } from "node:net";
import { FormatRegistry, type Static, type TObject, type TSchema, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";

export class ConfigError extends Error {
  readonly problems: { variable: string; message: string }[];

  constructor(problems: { variable: string; message: string }[]) {
    super(`invalid configuration:\n${problems.map((p) => `  ${p.variable}: ${p.message}`).join("\n")}`);
    this.problems = problems;
    this.name = "ConfigError";
  }
}

/**
 * Parses environment variables into a typed config. Property names are the variable names; strings are
 * converted to the schema's numbers and booleans, defaults filled in, and every problem is reported at once,
 * each naming its variable and the expected form.
 */
export function loadConfig<T extends TObject>(
  schema: T,
  env: Record<string, string | undefined> = process.env,
): Static<T> {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(schema.properties)) {
    const value = env[key];
    if (value !== undefined && value !== "") raw[key] = value;
  }
  const converted = Value.Convert(schema, Value.Default(schema, raw));
  const problems = [...Value.Errors(schema, converted)].map((e) => {
    const variable = e.path.split("/")[1] || e.path;
    const expected = describe(schema.properties[variable]);
    const given = raw[variable];
    return {
      variable,
      message:
        given === undefined
          ? `is required (${expected})`
          : `${JSON.stringify(given)} is not valid: ${e.message} (${expected})`,
    };
  });
  if (problems.length > 0) {
    const firstPerVariable = problems.filter(
      (p, i) => problems.findIndex((q) => q.variable === p.variable) === i,
    );
    throw new ConfigError(firstPerVariable);
  }
  return converted as Static<T>;
}

function describe(schema: TSchema | undefined): string {
  if (!schema) return "unknown variable";
  if (schema.description) return schema.description;
  if (schema.anyOf) return (schema.anyOf as TSchema[]).map(describe).join(" or ");
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.type === "integer" || schema.type === "number") {
    const range = [
      schema.minimum !== undefined && `>= ${schema.minimum}`,
      schema.maximum !== undefined && `<= ${schema.maximum}`,
    ]
      .filter(Boolean)
      .join(", ");
    return `${schema.type === "integer" ? "an integer" : "a number"}${range ? ` ${range}` : ""}`;
  }
  if (schema.type === "boolean") return "true or false";
  if (schema.format === "uri") return "a URL";
  if (schema.pattern) return `a string matching ${schema.pattern}`;
  return "a string";
}

/** Reusable variable shapes. */
export const Env = {
  port: (defaultPort: number) =>
    Type.Integer({ minimum: 0, maximum: 65535, default: defaultPort, description: "a TCP port 0-65535" }),
  url: (defaultUrl?: string) =>
    Type.String({
      pattern: "^[a-z][a-z0-9+.-]*://",
      description: "a URL such as scheme://host:port",
      ...(defaultUrl ? { default: defaultUrl } : {}),
    }),
  logLevel: () =>
    Type.Union(
      ["fatal", "error", "warn", "info", "debug", "trace", "silent"].map((l) => Type.Literal(l)),
      {
        default: "info",
        description: "one of fatal, error, warn, info, debug, trace, silent",
      },
    ),
  boolean: (defaultValue: boolean) => Type.Boolean({ default: defaultValue, description: "true or false" }),
  /** Comma-separated list; empty entries dropped. */
  list: (defaultValue = "") => Type.String({ default: defaultValue, description: "a comma-separated list" }),
  /** Comma-separated IP addresses and CIDRs; read it with `splitList`. */
  addressList: (description: string) => Type.String({ default: "", format: "address-list", description }),
  /** `HUMAN_PROOF_NONCE_KEYS`: the challenge-nonce key ring (`createChallengeNonces` of `@humanpass/human-proof`). */
  nonceKeys: () =>
    Type.Optional(
      Type.String({
        pattern: "^[^,]{32,}(,[^,]{32,})*$",
        description:
          "secret keys, comma-separated, each at least 32 characters: the first signs human-proof challenge nonces, all are accepted (rotate by putting the new key first); the same on every replica",
      }),
    ),
};

/** Without `HUMAN_PROOF_NONCE_KEYS` each process recognises only its own challenge nonces: refused in production. */
export function nonceKeysProblem(config: {
  NODE_ENV?: string;
  HUMAN_PROOF_NONCE_KEYS?: string;
}): { variable: string; message: string } | undefined {
  if (config.NODE_ENV !== "production" || config.HUMAN_PROOF_NONCE_KEYS) return undefined;
  return {
    variable: "HUMAN_PROOF_NONCE_KEYS",
    message:
      "is required when NODE_ENV=production: without it each process recognises only its own challenge nonces",
  };
}

export function splitList(value: string): string[] {
  return value
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** An IP address, or one with a prefix length (`10.0.0.0/8`, `fd00::/8`). */
export function isAddressOrCidr(entry: string): boolean {
  const slash = entry.indexOf("/");
  const family = isIP(slash < 0 ? entry : entry.slice(0, slash));
  if (family === 0) return false;
  if (slash < 0) return true;
  const prefix = entry.slice(slash + 1);
  return /^[0-9]{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

FormatRegistry.Set("address-list", (value) => splitList(value).every(isAddressOrCidr));

const ZERO_ADDRESS = /\b0x0{40}\b/;
/** RFC 2606 reserves .example for documentation: a host under it is one nobody filled in. */
const EXAMPLE_HOST = /(^|[/@.])[a-z0-9-]+\.example(?=$|[:/,?#])/i;

/**
 * Why a value only stands in for a deployment's own (a `replace-with-…` marker, the zero address, a host under
 * .example), or undefined when it does not. The values.env.example of the prod overlay is made of these.
 */
export function placeholderIn(value: string): string | undefined {
  if (/replace-with/i.test(value)) return "a placeholder is left";
  if (ZERO_ADDRESS.test(value)) return "the zero address is a placeholder";
  if (EXAMPLE_HOST.test(value)) return "a host under .example is a placeholder";
  return undefined;
}

/**
 * Refuses a production configuration holding a placeholder (`placeholderIn`), naming each setting and not its
 * value (a URL may carry a password). Outside production (NODE_ENV other than `production`) examples are fine.
 */
export function refusePlaceholdersInProduction(
  config: { NODE_ENV?: string } & Record<string, unknown>,
): void {
  if (config.NODE_ENV !== "production") return;
  const problems = Object.entries(config).flatMap(([variable, value]) => {
    const reason = typeof value === "string" ? placeholderIn(value) : undefined;
    return reason
      ? [
          {
            variable,
            message: `${reason}: set this deployment's own value (refused when NODE_ENV=production)`,
          },
        ]
      : [];
  });
  if (problems.length > 0) throw new ConfigError(problems);
}

const Milliseconds = (defaultMs: number, what: string) =>
  Type.Integer({ minimum: 1, default: defaultMs, description: `an integer >= 1 (milliseconds): ${what}` });

/**
 * Settings every service shares: where Postgres and NATS are, how to log, the event namespace, how it listens and
 * how long it waits.
 */
export const CommonEnv = {
  NODE_ENV: Type.String({
    default: "development",
    description:
      "production, development or test; production refuses placeholders (replace-with-…, the zero address, a host under .example) in every setting",
  }),
  DATABASE_URL: Env.url("postgres://postgres@127.0.0.1:5432/humanpass"),
  NATS_URL: Env.url("nats://127.0.0.1:4222"),
  NATS_USER: Type.Optional(
    Type.String({
      description: "the service's NATS user (deploy/k8s/base/nats/users.conf); none: no authentication",
    }),
  ),
  NATS_PASSWORD: Type.Optional(Type.String({ description: "that user's password" })),
  NATS_TLS_CA: Type.Optional(
    Type.String({
      description:
        "path of the PEM file of the CA that signed the NATS servers' certificates; set: the connection is TLS and the server's certificate is checked against it (the prod overlay mounts it)",
    }),
  ),
  NATS_STREAMS_WAIT_MS: Milliseconds(60_000, "how long a starting service waits for its JetStream streams"),
  LOG_LEVEL: Env.logLevel(),
  EVENTS_PREFIX: Type.String({
    default: "",
    pattern: "^([a-z0-9_]+)?$",
    description: "empty, or lower-case letters, digits and _",
  }),
  CORS_ORIGINS: Env.list(""),
  RATE_LIMIT_MAX: Type.Integer({ minimum: 1, default: 100, description: "an integer >= 1" }),
  JETSTREAM_REPLICAS: Type.Integer({
    minimum: 1,
    maximum: 5,
    default: 1,
    description: "replicas of each stream the topology step creates: 1, or 3 on a NATS cluster",
  }),
  RATE_LIMIT_WINDOW_MS: Type.Integer({
    minimum: 1,
    default: 60_000,
    description: "an integer >= 1 (milliseconds)",
  }),
  HOST: Type.String({ default: "0.0.0.0", description: "the address to listen on" }),
  TRUST_PROXY: Env.addressList(
    "the addresses or CIDRs of the proxies in front, comma-separated (e.g. 10.0.0.0/8,fd00::/8); empty: none. Only a peer listed here is believed about the client's address (X-Forwarded-For); a count or true/false, as earlier versions took, is refused: list the proxies' addresses instead",
  ),
  HTTP_REQUEST_TIMEOUT_MS: Milliseconds(
    30_000,
    "a request's headers and body must have arrived by then (else 408)",
  ),
  HTTP_CONNECTION_TIMEOUT_MS: Milliseconds(65_000, "an idle connection is closed after this"),
  HTTP_HANDLER_TIMEOUT_MS: Milliseconds(60_000, "a response not ready by then is answered 503 `timeout`"),
  DB_STATEMENT_TIMEOUT_MS: Milliseconds(
    10_000,
    "Postgres cancels a statement running longer (statement_timeout)",
  ),
  DB_QUERY_TIMEOUT_MS: Milliseconds(
    15_000,
    "the service gives up on a query Postgres has not answered by then (a stalled server or network)",
  ),
};
