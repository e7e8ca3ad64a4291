import { randomBytes } from "node:crypto";
import {
  applyTopologyAt,
  passwordVariable,
  type Retention,
  RetentionConfigError,
  renderUser,
  renderUsersConf,
  retentionFromEnv,
  STREAMS,
  type StreamName,
  subscriberDurables,
  subscriberPermissions,
  subscriberUser,
} from "@humanpass/event-bus";
import { natsCredentials, parseConnectionArgs, UsageError } from "./args.ts";

export const NATS_USAGE = `Usage: humanpass nats users-conf [--prefix <p>]
       humanpass nats subscriber <name> --streams <STREAM,…> [--durables <name>_<x>,…] [--password <p>] [--prefix <p>]
       humanpass nats topology [--replicas <n>] [--prefix <p>] [--server <url>]

users-conf   prints deploy/k8s/base/nats/users.conf as generated from libs/event-bus/src/permissions.ts
subscriber   prints a users.conf entry for user subscriber-<name>, to add to the users list of your copy of
             users.conf (never to the repository's): it may read the granted streams (${Object.keys(STREAMS).join(", ")})
             through its own consumers only (default: <name>_<stream>, e.g. acme_verifier, and <name>_replay;
             or --durables), and nothing else. The entry names its password by variable (NATS_SUBSCRIBER_<NAME>_PASSWORD, set in the NATS
             server's environment from your secret store); the password (generated unless --password is given)
             goes to stderr, once. Its client must connect with inboxPrefix "_INBOX_subscriber-<name>".
topology     creates or updates every stream and the dead-letter stream (NATS_USER=topology and NATS_PASSWORD
             where the server requires a user; --replicas or $JETSTREAM_REPLICAS, default 1; retention from
             $JETSTREAM_<STREAM>_MAX_AGE and $JETSTREAM_<STREAM>_MAX_BYTES, docs/deploy.md)
`;

export type NatsCommand =
  | { command: "users-conf"; prefix: string }
  | {
      command: "subscriber";
      prefix: string;
      name: string;
      streams: StreamName[];
      durables?: string[];
      password?: string;
    }
  | { command: "topology"; prefix: string; servers: string; replicas: number; retention: Retention };

const list = (v: string) =>
  v
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

export function parseNatsArgs(
  command: string | undefined,
  argv: string[],
  env: Record<string, string | undefined> = process.env,
): NatsCommand {
  if (command === "users-conf") {
    const { prefix } = parseConnectionArgs(argv, env, () => false);
    return { command, prefix };
  }
  if (command === "subscriber") {
    let name: string | undefined;
    let streams: string[] = [];
    let durables: string[] | undefined;
    let password: string | undefined;
    const { prefix } = parseConnectionArgs(argv, env, (flag, take) => {
      if (flag === "--streams") streams = list(take()).map((s) => s.toUpperCase());
      else if (flag === "--durables") durables = list(take());
      else if (flag === "--password") password = take();
      else if (!flag.startsWith("-") && name === undefined) name = flag;
      else return false;
      return true;
    });
    if (!name) throw new UsageError("nats subscriber: give the subscriber's name");
    if (streams.length === 0) throw new UsageError("nats subscriber: --streams is required");
    try {
      subscriberDurables({ name, streams: streams as StreamName[], durables });
    } catch (e) {
      throw new UsageError(`nats subscriber: ${(e as Error).message}`);
    }
    return { command, prefix, name, streams: streams as StreamName[], durables, password };
  }
  if (command === "topology") {
    let replicas = Number(env.JETSTREAM_REPLICAS ?? 1);
    const connection = parseConnectionArgs(argv, env, (flag, take) => {
      if (flag !== "--replicas") return false;
      replicas = Number(take());
      return true;
    });
    if (!Number.isInteger(replicas) || replicas < 1 || replicas > 5)
      throw new UsageError("--replicas: an integer from 1 to 5");
    try {
      return { command, ...connection, replicas, retention: retentionFromEnv(env) };
    } catch (e) {
      if (e instanceof RetentionConfigError) throw new UsageError(e.message);
      throw e;
    }
  }
  throw new UsageError(`unknown command: nats ${command ?? ""}`.trim());
}

export async function runNats(
  options: NatsCommand,
  io: { out: (text: string) => void; err: (line: string) => void },
): Promise<number> {
  const topology = { prefix: options.prefix };
  if (options.command === "users-conf") {
    io.out(renderUsersConf(topology));
    return 0;
  }
  if (options.command === "subscriber") {
    const user = subscriberUser(options.name);
    const password = options.password ?? randomBytes(24).toString("base64url");
    const grant = { name: options.name, streams: options.streams, durables: options.durables };
    const variable = passwordVariable(user);
    io.out(
      [
        `    # ${user}: reads ${options.streams.join(", ")} through durables ${subscriberDurables(grant).join(", ")}`,
        renderUser(user, `$${variable}`, subscriberPermissions(grant, topology)),
        "",
      ].join("\n"),
    );
    io.err(`${variable}=${password}`);
    io.err(
      `set it in the NATS server's environment (a Secret in Kubernetes) and give it to the subscriber; it is not stored anywhere`,
    );
    return 0;
  }
  const { user, pass, tls } = natsCredentials();
  const streams = await applyTopologyAt(options.servers, topology, {
    user,
    pass,
    tlsCaFile: tls?.caFile,
    replicas: options.replicas,
    retention: options.retention,
  });
  io.err(`streams applied: ${streams.join(", ")}`);
  return 0;
}
