import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { connect } from "@nats-io/transport-node";
import { freePort } from "./ports.ts";

export interface OwnNatsServer {
  url: string;
  stop(): Promise<void>;
}

/**
 * A JetStream nats-server of the test's own (the machine's nats-server, 2.9.10) on a free 127.0.0.1 port, with
 * `config` as its configuration file in a temporary folder (with its store) and `env` as its whole environment:
 * a users.conf takes its passwords from there, as the deployments pass them. Resolves once `probe` connects.
 */
export async function startOwnNatsServer(options: {
  config: string;
  env: Record<string, string>;
  probe: { user: string; pass: string };
}): Promise<OwnNatsServer> {
  const dir = mkdtempSync(path.join(tmpdir(), "nats-own-"));
  const confFile = path.join(dir, "nats.conf");
  writeFileSync(confFile, options.config);
  const port = await freePort();
  const url = `nats://127.0.0.1:${port}`;
  const server: ChildProcess = spawn(
    "nats-server",
    ["-js", "-sd", path.join(dir, "store"), "-a", "127.0.0.1", "-p", String(port), "-c", confFile],
    { env: { PATH: process.env.PATH ?? "", ...options.env }, stdio: "ignore" },
  );
  const exited = new Promise((resolve) => server.once("exit", resolve));
  const stop = async () => {
    if (server.exitCode === null) server.kill();
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  for (let tries = 0; ; tries++) {
    try {
      const nc = await connect({ servers: url, ...options.probe, reconnect: false });
      await nc.close();
      return { url, stop };
    } catch (e) {
      if (tries >= 100 || server.exitCode !== null) {
        await stop();
        throw new Error(`nats-server did not start with ${confFile}: ${(e as Error).message}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
