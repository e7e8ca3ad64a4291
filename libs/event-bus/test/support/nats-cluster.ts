import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { sleep } from "@humanpass/retry";
import { freePort } from "@humanpass/testing";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";

export interface NatsCluster {
  /** Every node's client URL, comma-separated, as NATS_URL takes it. */
  url: string;
  connect(): Promise<NatsConnection>;
  stop(): Promise<void>;
}

/** A JetStream cluster of `size` nats-servers of the test's own on loopback, ready once it has a meta leader. */
export async function startNatsCluster(size = 3): Promise<NatsCluster> {
  const dir = mkdtempSync(path.join(tmpdir(), "nats-cluster-"));
  const ports = await Promise.all(
    Array.from({ length: size }, async () => [await freePort(), await freePort()]),
  );
  const routes = ports.map(([, route]) => `nats://127.0.0.1:${route}`).join(", ");
  const servers: ChildProcess[] = ports.map(([client, route], i) => {
    const conf = path.join(dir, `n${i}.conf`);
    writeFileSync(
      conf,
      [
        `server_name: n${i}`,
        `listen: 127.0.0.1:${client}`,
        `jetstream { store_dir: ${JSON.stringify(path.join(dir, `n${i}`))} }`,
        `cluster { name: test, listen: 127.0.0.1:${route}, routes: [${routes}] }`,
      ].join("\n"),
    );
    return spawn("nats-server", ["-c", conf], { stdio: "ignore" });
  });
  const exited = servers.map((s) => new Promise((resolve) => s.once("exit", resolve)));
  const url = ports.map(([client]) => `nats://127.0.0.1:${client}`).join(",");
  const stop = async () => {
    for (const s of servers) if (s.exitCode === null) s.kill();
    await Promise.all(exited);
    rmSync(dir, { recursive: true, force: true });
  };
  const open = () => connect({ servers: url.split(","), noAsyncTraces: true });
  for (let tries = 0; ; tries++) {
    try {
      const nc = await open();
      try {
        // Answers only once the cluster has elected its JetStream meta leader.
        await (await jetstreamManager(nc, { timeout: 1_000 })).getAccountInfo();
      } finally {
        await nc.close();
      }
      break;
    } catch (e) {
      if (tries >= 150 || servers.some((s) => s.exitCode !== null)) {
        await stop();
        throw new Error(`the NATS cluster in ${dir} did not become ready: ${(e as Error).message}`);
      }
      await sleep(200);
    }
  }
  const clients: NatsConnection[] = [];
  return {
    url,
    async connect() {
      const nc = await open();
      clients.push(nc);
      return nc;
    },
    async stop() {
      await Promise.all(clients.map((nc) => nc.close().catch(() => {})));
      await stop();
    },
  };
}
