import { randomBytes } from "node:crypto";
import {
  applyTopologyAt,
  driftName,
  parseSubscriberGrant,
  parseSubscriberGrants,
  passwordVariable,
  type Retention,
  RetentionConfigError,
  renderSubscriberAccount,
  renderUsersConf,
  retentionFromEnv,
  STREAMS,
  type StreamDrift,
  type SubscriberGrant,
  subscriberAccount,
  subscriberUser,
} from "@humanpass/event-bus";
import { natsCredentials, parseConnectionArgs, UsageError } from "./args.ts";

export const NATS_USAGE = `Usage: humanpass nats users-conf [--subscriber <name>=<STREAM,…>]… [--prefix <p>]
       humanpass nats subscriber <name> --streams <STREAM,…> [--password <p>] [--prefix <p>]
       humanpass nats topology [--subscriber <name>=<STREAM,…>]… [--update [--confirm]] [--replicas <n>] [--prefix <p>] [--server <url>]

users-conf   prints the NATS accounts file: deploy/k8s/base/nats/users.conf as generated from
             libs/event-bus/src/permissions.ts, plus an account per --subscriber (or $NATS_SUBSCRIBERS, space
             separated) and the exports and imports of the services' account for it
subscriber   prints the account entry of subscriber-<name>: an account of its own (SUBSCRIBER_<NAME>) holding
             copies of the granted streams (${Object.keys(STREAMS).join(", ")}), sourced from the services' account,
             where it may create any consumer and change no stream. Its password (generated unless --password is
             given) goes to stderr, once; the entry names it by variable (NATS_SUBSCRIBER_<NAME>_PASSWORD). Add the
             subscriber to the file with users-conf --subscriber <name>=<STREAM,…>, which prints this entry too.
topology     creates every missing stream, the dead-letter stream, the services' durable pull consumers and the
             subscribers' copies (--subscriber or $NATS_SUBSCRIBERS) as NATS_USER=topology (NATS_PASSWORD) where the server requires a user;
             --replicas or $JETSTREAM_REPLICAS (default 1); retention from $JETSTREAM_<STREAM>_MAX_AGE and
             $JETSTREAM_<STREAM>_MAX_BYTES (docs/deploy.md). An existing stream or durable is never changed: its differences are printed.
             --update prints them and exits 1; --update --confirm applies them (a smaller limit removes stored
             events), as NATS_USER=operator: the topology user may not update a stream.
`;

export type NatsCommand =
  | { command: "users-conf"; prefix: string; subscribers: SubscriberGrant[] }
  | { command: "subscriber"; prefix: string; grant: SubscriberGrant; password?: string }
  | {
      command: "topology";
      prefix: string;
      servers: string;
      replicas: number;
      retention: Retention;
      subscribers: SubscriberGrant[];
      update: "no" | "show" | "apply";
    };

/** `--subscriber <name>=<STREAM,…>` flags, else $NATS_SUBSCRIBERS. */
function subscribersOf(flags: string[], env: Record<string, string | undefined>): SubscriberGrant[] {
  try {
    return flags.length > 0 ? flags.map(parseSubscriberGrant) : parseSubscriberGrants(env.NATS_SUBSCRIBERS);
  } catch (e) {
    throw new UsageError(`--subscriber: ${(e as Error).message}`);
  }
}

export function parseNatsArgs(
  command: string | undefined,
  argv: string[],
  env: Record<string, string | undefined> = process.env,
): NatsCommand {
  const subscriberFlags: string[] = [];
  const subscriberFlag = (flag: string, take: () => string) => {
    if (flag !== "--subscriber") return false;
    subscriberFlags.push(take());
    return true;
  };
  if (command === "users-conf") {
    const { prefix } = parseConnectionArgs(argv, env, subscriberFlag);
    return { command, prefix, subscribers: subscribersOf(subscriberFlags, env) };
  }
  if (command === "subscriber") {
    let name: string | undefined;
    let streams = "";
    let password: string | undefined;
    const { prefix } = parseConnectionArgs(argv, env, (flag, take) => {
      if (flag === "--streams") streams = take();
      else if (flag === "--password") password = take();
      else if (!flag.startsWith("-") && name === undefined) name = flag;
      else return false;
      return true;
    });
    if (!name) throw new UsageError("nats subscriber: give the subscriber's name");
    if (!streams) throw new UsageError("nats subscriber: --streams is required");
    try {
      return { command, prefix, grant: parseSubscriberGrant(`${name}=${streams}`), password };
    } catch (e) {
      throw new UsageError(`nats subscriber: ${(e as Error).message}`);
    }
  }
  if (command === "topology") {
    let replicas = Number(env.JETSTREAM_REPLICAS ?? 1);
    let update = false;
    let confirm = false;
    const connection = parseConnectionArgs(argv, env, (flag, take) => {
      if (flag === "--replicas") replicas = Number(take());
      else if (flag === "--update") update = true;
      else if (flag === "--confirm") confirm = true;
      else return subscriberFlag(flag, take);
      return true;
    });
    if (!Number.isInteger(replicas) || replicas < 1 || replicas > 5)
      throw new UsageError("--replicas: an integer from 1 to 5");
    if (confirm && !update) throw new UsageError("--confirm goes with --update");
    try {
      return {
        command,
        ...connection,
        replicas,
        retention: retentionFromEnv(env),
        subscribers: subscribersOf(subscriberFlags, env),
        update: !update ? "no" : confirm ? "apply" : "show",
      };
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
    io.out(renderUsersConf(topology, options.subscribers));
    return 0;
  }
  if (options.command === "subscriber") {
    const { grant } = options;
    const password = options.password ?? randomBytes(24).toString("base64url");
    io.out(`${renderSubscriberAccount(grant, topology)}\n`);
    io.err(`${passwordVariable(subscriberUser(grant.name))}=${password}`);
    io.err(
      `set it in the NATS server's environment (a Secret in Kubernetes) and give it to the subscriber; it is not stored anywhere. ` +
        `Account ${subscriberAccount(grant.name)} goes into the file with: npx humanpass nats users-conf --subscriber ${grant.name}=${grant.streams.join(",")} (and your other subscribers); ` +
        `then the topology step with the same --subscriber flags creates its copies of the streams`,
    );
    return 0;
  }
  const drifts: StreamDrift[] = [];
  const { user, pass, tls } = natsCredentials();
  const streams = await applyTopologyAt(options.servers, topology, {
    user,
    pass,
    tlsCaFile: tls?.caFile,
    replicas: options.replicas,
    retention: options.retention,
    subscribers: options.subscribers,
    update: options.update === "apply",
    onDrift: (d) => drifts.push(d),
  });
  io.err(`streams and durables applied: ${streams.join(", ")}`);
  const applied = options.update === "apply";
  for (const drift of drifts)
    io.err(
      `${driftName(drift)} ${applied ? "updated" : "differs from the topology"}: ${drift.changes.join(", ")}`,
    );
  if (drifts.length === 0 || applied) return 0;
  if (options.update === "show") {
    io.err(
      "nothing changed: add --confirm to apply these (a smaller limit removes the stored events beyond it)",
    );
    return 1;
  }
  io.err(
    "not changed: the topology user creates streams only; to apply, as NATS_USER=operator: npx humanpass nats topology --update --confirm",
  );
  return 0;
}
