import { readFileSync } from "node:fs";
import { credsAuthenticator } from "@nats-io/nats-core";

/** Everything the subscriber needs, from its environment; credentials never live in code or in the image. */
export function readConfig(env = process.env) {
  const required = (name) => {
    const value = env[name];
    if (!value) throw new Error(`${name} is required`);
    return value;
  };
  const name = env.SUBSCRIBER_NAME ?? "example";
  if (!/^[a-z0-9-]+$/.test(name)) throw new Error("SUBSCRIBER_NAME: lower-case letters, digits and dashes");
  if (env.DATABASE_SCHEMA && !/^[a-z_][a-z0-9_]*$/.test(env.DATABASE_SCHEMA))
    throw new Error("DATABASE_SCHEMA: lower-case letters, digits and underscores");
  return {
    databaseUrl: required("DATABASE_URL"),
    // Its own schema, so it can share a database with anything else.
    databaseSchema: env.DATABASE_SCHEMA ?? "example_subscriber",
    nats: natsOptions(env),
    // Its consumers live in its own NATS account (`npx humanpass nats subscriber <name> --streams AGENT_AUTH,PAYMENTS`),
    // so any name would do; `<name>_<stream>` keeps them apart from others the team adds.
    durableOf: (stream) => `${name}_${stream.toLowerCase().replace(/_/g, "-")}`,
    topology: { prefix: env.EVENTS_PREFIX ?? "" },
    logLevel: env.LOG_LEVEL ?? "info",
  };
}

/** NATS connection options: a creds file, a user and password, or none (a server without auth, e.g. a laptop). */
function natsOptions(env) {
  const options = {
    servers: (env.NATS_URL ?? "nats://127.0.0.1:4222").split(","),
    name: "example-subscriber",
  };
  if (env.NATS_CREDS) return { ...options, authenticator: credsAuthenticator(readFileSync(env.NATS_CREDS)) };
  if (env.NATS_USER) return { ...options, user: env.NATS_USER, pass: env.NATS_PASSWORD ?? "" };
  return options;
}
