import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import {
  DEAD_LETTERS_USER,
  DEFAULT_TOPOLOGY,
  OPERATOR_USER,
  passwordVariable,
  REINDEX_GRANT,
  renderUsersConf,
  SERVICE_GRANTS,
  type SubscriberGrant,
  subscriberUser,
  TOPOLOGY_USER,
} from "@humanpass/event-bus";
import { sleep } from "@humanpass/retry";
import { REPO_ROOT } from "@humanpass/testing/service-process";
import { connect } from "@nats-io/transport-node";

/** The users file compose's NATS and make up's load: the services' account and examples/subscriber's. */
export const COMPOSE_USERS_CONF = path.join(REPO_ROOT, "deploy/compose/nats-users.conf");
/** examples/subscriber's account in that file (`users-conf --subscriber example=AGENT_AUTH,PAYMENTS`). */
export const EXAMPLE_SUBSCRIBER: SubscriberGrant = { name: "example", streams: ["AGENT_AUTH", "PAYMENTS"] };

/** A user's password under make up and compose unless its variable is set: `dev-<user>`, as docker-compose.yml. */
export function devNatsPassword(user: string, env: Record<string, string | undefined> = process.env): string {
  return env[passwordVariable(user)] || `dev-${user}`;
}

export interface LocalNats {
  url: string;
  pid: number;
  /** The users file it loaded. */
  config: string;
  /** The subscribers whose accounts it has: examples/subscriber's and `subscribers`. */
  subscribers: SubscriberGrant[];
  passwordOf(user: string): string;
  stop(): Promise<void>;
}

function natsServerBinary(): string {
  for (const dir of [...(process.env.PATH ?? "").split(path.delimiter), "/usr/sbin", "/usr/local/bin"]) {
    const bin = path.join(dir, "nats-server");
    if (dir && existsSync(bin)) return bin;
  }
  throw new Error(
    "no nats-server binary (make up installs Debian's nats-server as root); or run against another NATS: HUMANPASS_NATS_URL=nats://… make up",
  );
}

/**
 * make up's NATS: the installed nats-server on 127.0.0.1:`port`, JetStream stored in `storeDir`, loading the
 * committed deploy/compose/nats-users.conf (the same accounts and users as production, plus examples/subscriber's);
 * with `subscribers`, that file generated with their accounts too. Passwords are `$NATS_<USER>_PASSWORD` or
 * `dev-<user>`. Resolves once the operator user connects.
 */
export async function startLocalNats(options: {
  port: number;
  storeDir: string;
  subscribers?: SubscriberGrant[];
  env?: Record<string, string | undefined>;
}): Promise<LocalNats> {
  const extra = (options.subscribers ?? []).filter((g) => g.name !== EXAMPLE_SUBSCRIBER.name);
  const subscribers = [EXAMPLE_SUBSCRIBER, ...extra];
  mkdirSync(options.storeDir, { recursive: true });
  let config = COMPOSE_USERS_CONF;
  if (extra.length > 0) {
    config = path.join(options.storeDir, "users.conf");
    writeFileSync(config, renderUsersConf(DEFAULT_TOPOLOGY, subscribers));
  }
  const users = [
    ...SERVICE_GRANTS.map((g) => g.user),
    TOPOLOGY_USER,
    OPERATOR_USER,
    REINDEX_GRANT.user,
    DEAD_LETTERS_USER,
    ...subscribers.map((g) => subscriberUser(g.name)),
  ];
  const passwordOf = (user: string) => devNatsPassword(user, options.env);
  const url = `nats://127.0.0.1:${options.port}`;
  const server: ChildProcess = spawn(
    natsServerBinary(),
    [
      ...["-c", config, "-js", "-sd", options.storeDir, "-a", "127.0.0.1", "-p", String(options.port)],
      ...["-l", path.join(options.storeDir, "server.log")],
    ],
    {
      env: {
        PATH: process.env.PATH ?? "",
        ...Object.fromEntries(users.map((u) => [passwordVariable(u), passwordOf(u)])),
      },
      stdio: "ignore",
    },
  );
  const exited = new Promise<void>((resolve) => server.once("exit", () => resolve()));
  const stop = async () => {
    if (server.exitCode === null && server.signalCode === null) server.kill("SIGTERM");
    await exited;
  };
  for (let tries = 0; ; tries++) {
    try {
      const nc = await connect({
        servers: url,
        user: OPERATOR_USER,
        pass: passwordOf(OPERATOR_USER),
        reconnect: false,
      });
      await nc.close();
      return { url, pid: server.pid!, config, subscribers, passwordOf, stop };
    } catch (e) {
      if (tries >= 100 || server.exitCode !== null) {
        await stop();
        throw new Error(
          `nats-server did not start on ${url} with ${config} (see ${path.join(options.storeDir, "server.log")}): ${(e as Error).message}`,
        );
      }
      await sleep(100);
    }
  }
}
