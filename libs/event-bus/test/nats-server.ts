import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { eventually, freePort } from "@humanpass/testing";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { inboxPrefixOf, passwordVariable } from "../src";

export interface AuthNatsServer {
  url: string;
  /** Connects as `user` (password `test-<user>`) with that user's inbox prefix, as services and subscribers do. */
  connectAs(user: string): Promise<NatsConnection>;
  stop(): Promise<void>;
}

export const passwordOf = (user: string) => `test-${user}`;

/**
 * A JetStream nats-server of the test's own (the machine's /usr/sbin/nats-server, 2.9.10) on a free port, with
 * `usersConf` as its configuration in a temporary folder; `users` get their password through the environment, as
 * the deployments pass them.
 */
export async function startAuthNatsServer(usersConf: string, users: string[]): Promise<AuthNatsServer> {
  const dir = mkdtempSync(path.join(tmpdir(), "nats-auth-"));
  const confFile = path.join(dir, "users.conf");
  writeFileSync(confFile, usersConf);
  const port = await freePort();
  const url = `nats://127.0.0.1:${port}`;
  const env: Record<string, string> = { PATH: process.env.PATH ?? "" };
  for (const user of users) env[passwordVariable(user)] = passwordOf(user);
  const server: ChildProcess = spawn(
    "nats-server",
    ["-js", "-sd", path.join(dir, "store"), "-a", "127.0.0.1", "-p", String(port), "-c", confFile],
    { env, stdio: "ignore" },
  );
  const open: NatsConnection[] = [];
  const connectAs = async (user: string) => {
    const nc = await connect({
      servers: url,
      user,
      pass: passwordOf(user),
      inboxPrefix: inboxPrefixOf(user),
      noAsyncTraces: true,
    });
    open.push(nc);
    return nc;
  };
  await eventually(() => connectAs("operator").then(() => true), 10_000, 100);
  return {
    url,
    connectAs,
    async stop() {
      await Promise.all(open.map((nc) => nc.close().catch(() => {})));
      server.kill();
      await new Promise((resolve) => server.once("exit", resolve));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
