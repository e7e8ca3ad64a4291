import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { sleep } from "@humanpass/retry";
import { connect } from "@nats-io/transport-node";

export interface OwnNatsServer {
  url: string;
  stop(): Promise<void>;
}

const LISTENING = /Listening for client connections on [^\s]*:(\d+)/;
const READY_WITHIN_MS = 60_000;

/**
 * A JetStream nats-server of the test's own (the machine's nats-server, 2.9.10) on a free 127.0.0.1 port, with
 * `config` as its configuration file in a temporary folder (with its store) and `env` as its whole environment:
 * a users.conf takes its passwords from there, as the deployments pass them. Resolves once `probe` connects.
 * The server picks its own port (`-p -1`) and names it in its log, so no other test can take it between a port
 * probe and the server's bind; a server that exits before it is ready fails with its log.
 */
export async function startOwnNatsServer(options: {
  config: string;
  env: Record<string, string>;
  probe: { user: string; pass: string };
}): Promise<OwnNatsServer> {
  const dir = mkdtempSync(path.join(tmpdir(), "nats-own-"));
  const confFile = path.join(dir, "nats.conf");
  writeFileSync(confFile, options.config);
  const server: ChildProcess = spawn(
    "nats-server",
    ["-js", "-sd", path.join(dir, "store"), "-a", "127.0.0.1", "-p", "-1", "-c", confFile],
    { env: { PATH: process.env.PATH ?? "", ...options.env }, stdio: ["ignore", "ignore", "pipe"] },
  );
  let log = "";
  const exited = new Promise((resolve) => server.once("exit", resolve));
  const stop = async () => {
    if (server.exitCode === null) server.kill();
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  const failed = async (why: string): Promise<never> => {
    await stop();
    throw new Error(`nats-server did not start with ${confFile}: ${why}\n${log.slice(-2000)}`);
  };
  const port = await new Promise<string | undefined>((resolve) => {
    const timer = setTimeout(() => resolve(undefined), READY_WITHIN_MS);
    server.stderr?.on("data", (chunk: Buffer) => {
      log += chunk.toString();
      const match = LISTENING.exec(log);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    server.once("exit", () => {
      clearTimeout(timer);
      resolve(undefined);
    });
  });
  if (port === undefined) return failed(`no client port within ${READY_WITHIN_MS} ms or exited`);
  const url = `nats://127.0.0.1:${port}`;
  const deadline = Date.now() + READY_WITHIN_MS;
  for (;;) {
    try {
      const nc = await connect({ servers: url, ...options.probe, reconnect: false });
      await nc.close();
      return { url, stop };
    } catch (e) {
      if (Date.now() > deadline || server.exitCode !== null) return failed((e as Error).message);
      await sleep(100);
    }
  }
}
