import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { sleep } from "@humanpass/retry";
import { connect } from "@nats-io/transport-node";
import { freePort } from "./ports.ts";

export interface ClusterNode {
  name: string;
  url: string;
  /** The node's monitoring endpoint (`/jsz`, `/healthz`). */
  monitorUrl: string;
  readonly running: boolean;
}

export interface NatsCluster {
  nodes: ClusterNode[];
  /** Every node's client URL, comma-separated: what a service gets as NATS_URL. */
  servers: string;
  /** The node that leads the JetStream meta group, as the nodes still running see it (undefined mid-election). */
  metaLeader(): Promise<string | undefined>;
  /** SIGKILL: the node goes as a crash or a lost machine takes it, with no lame-duck mode. */
  kill(name: string): Promise<void>;
  /**
   * SIGSTOP: the node freezes with its connections open, as a node cut off by a partition looks to its clients
   * and peers (no connection closes; nothing answers).
   */
  pause(name: string): void;
  /** SIGCONT: a paused node goes on where it stopped. */
  resume(name: string): void;
  /** Starts a killed node again on its ports and its store; resolves once it accepts clients. */
  restart(name: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Three (or `size`) JetStream nodes of the machine's nats-server in one cluster on 127.0.0.1 free ports, each with
 * its store in a temporary folder, as a NATS cluster of the prod overlay runs them (one route to every node).
 * Resolves once a meta leader is elected, so streams of replicas `size` can be created.
 */
export async function startNatsCluster(size = 3): Promise<NatsCluster> {
  const dir = mkdtempSync(path.join(tmpdir(), "nats-cluster-"));
  const specs: { name: string; port: number; clusterPort: number; httpPort: number }[] = [];
  for (let i = 0; i < size; i++)
    specs.push({
      name: `n${i}`,
      port: await freePort(),
      clusterPort: await freePort(),
      httpPort: await freePort(),
    });
  const routes = specs.map((s) => `nats://127.0.0.1:${s.clusterPort}`).join(", ");
  const processes = new Map<string, { child: ChildProcess; exited: Promise<unknown> }>();

  const nodes: ClusterNode[] = specs.map((s) => ({
    name: s.name,
    url: `nats://127.0.0.1:${s.port}`,
    monitorUrl: `http://127.0.0.1:${s.httpPort}`,
    get running() {
      const child = processes.get(s.name)?.child;
      return child !== undefined && child.exitCode === null && child.signalCode === null;
    },
  }));

  for (const s of specs) {
    writeFileSync(
      path.join(dir, `${s.name}.conf`),
      `server_name: ${s.name}
listen: 127.0.0.1:${s.port}
http: 127.0.0.1:${s.httpPort}
jetstream { store_dir: "${path.join(dir, s.name)}" }
cluster { name: loopback, listen: 127.0.0.1:${s.clusterPort}, routes: [${routes}] }
`,
    );
  }

  function spawnNode(name: string) {
    const child = spawn("nats-server", ["-c", path.join(dir, `${name}.conf`)], {
      env: { PATH: process.env.PATH ?? "" },
      stdio: "ignore",
    });
    processes.set(name, { child, exited: new Promise((resolve) => child.once("exit", resolve)) });
  }

  async function accepting(node: ClusterNode) {
    for (let tries = 0; ; tries++) {
      try {
        const nc = await connect({ servers: node.url, reconnect: false });
        await nc.close();
        return;
      } catch (e) {
        if (tries >= 300 || !node.running)
          throw new Error(`nats-server ${node.name} did not start: ${(e as Error).message}`);
        await sleep(100);
      }
    }
  }

  async function metaLeader(): Promise<string | undefined> {
    for (const node of nodes.filter((n) => n.running)) {
      try {
        const jsz = (await (await fetch(`${node.monitorUrl}/jsz`)).json()) as {
          meta_cluster?: { leader?: string };
        };
        if (jsz.meta_cluster?.leader) return jsz.meta_cluster.leader;
      } catch {
        // Not answering: ask the next node.
      }
    }
    return undefined;
  }

  async function kill(name: string) {
    const p = processes.get(name);
    if (!p) throw new Error(`no node ${name}`);
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL");
    await p.exited;
  }

  function signal(name: string, sig: NodeJS.Signals) {
    const p = processes.get(name);
    if (!p) throw new Error(`no node ${name}`);
    p.child.kill(sig);
  }

  const stop = async () => {
    await Promise.all(nodes.map((n) => kill(n.name)));
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    for (const s of specs) spawnNode(s.name);
    await Promise.all(nodes.map(accepting));
    for (let tries = 0; !(await metaLeader()); tries++) {
      if (tries >= 600) throw new Error("the NATS cluster elected no meta leader");
      await sleep(100);
    }
  } catch (e) {
    await stop();
    throw e;
  }

  return {
    nodes,
    servers: nodes.map((n) => n.url).join(","),
    metaLeader,
    kill,
    pause: (name) => signal(name, "SIGSTOP"),
    resume: (name) => signal(name, "SIGCONT"),
    async restart(name: string) {
      const node = nodes.find((n) => n.name === name);
      if (!node) throw new Error(`no node ${name}`);
      if (node.running) throw new Error(`node ${name} is running`);
      spawnNode(name);
      await accepting(node);
    },
    stop,
  };
}
