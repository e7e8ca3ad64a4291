import { startOwnNatsServer } from "@humanpass/testing";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { inboxPrefixOf, passwordVariable } from "../../src/index.ts";

export interface AuthNatsServer {
  url: string;
  /** Connects as `user` (password `test-<user>`) with that user's inbox prefix, as services and subscribers do. */
  connectAs(user: string): Promise<NatsConnection>;
  stop(): Promise<void>;
}

export const passwordOf = (user: string) => `test-${user}`;

/** A nats-server of the test's own with `usersConf`; each of `users` gets its password through the environment. */
export async function startAuthNatsServer(usersConf: string, users: string[]): Promise<AuthNatsServer> {
  const env = Object.fromEntries(users.map((user) => [passwordVariable(user), passwordOf(user)]));
  const server = await startOwnNatsServer({
    config: usersConf,
    env,
    probe: { user: "operator", pass: passwordOf("operator") },
  });
  const open: NatsConnection[] = [];
  return {
    url: server.url,
    async connectAs(user: string) {
      const nc = await connect({
        servers: server.url,
        user,
        pass: passwordOf(user),
        inboxPrefix: inboxPrefixOf(user),
        noAsyncTraces: true,
      });
      open.push(nc);
      return nc;
    },
    async stop() {
      await Promise.all(open.map((nc) => nc.close().catch(() => {})));
      await server.stop();
    },
  };
}
