// make test-compose-cluster (vitest --project compose-cluster), once scripts/compose/test-cluster.sh has the stack up
// with NATS as a 3-node JetStream cluster and every stream at 3 replicas (docker-compose.cluster.yml): while a
// bounded workload runs, the meta leader is killed, then the leader of VERIFIER, then the leader of PAYMENTS, each
// started again before the next, then the leader of PAYMENTS is paused for 20 s (a node cut off). No fault is
// declared an outage: a cluster that lost one node of three must keep serving. The invariants of the compose test
// then hold over what the workload did.
// Figures logged per fault: how long until the other nodes all saw another leader of each group the node led, the longest an outbox row waited for its
// PubAck around the fault (publishing stalled), and how long the node took, once back, to be current on every stream.

import { jetstreamManager } from "@humanpass/event-bus";
import { sleep } from "@humanpass/retry";
import { beforeAll, describe, expect, it } from "vitest";
import { docker } from "./docker.ts";
import { invariantTests, openFaultSuite } from "./fault-suite.ts";
import type { Fault } from "./faults.ts";
import { INVARIANTS, type Invariant, SCHEMAS } from "./invariants.ts";

/** The compose services of the nodes, and the server names docker-compose.cluster.yml gives them. */
const NODES: Record<string, string> = { nats: "nats-0", "nats-1": "nats-1", "nats-2": "nats-2" };

const suite = await openFaultSuite({
  readyBoundS: 30,
  workload: {
    attestations: 40,
    claims: 80,
    paid: 10,
    gaps: { attestationMs: 1_500, claimMs: 1_000, paidMs: 6_000 },
    seconds: 480,
  },
  // The operator, to every node: its address on the project's network (reachable from the host).
  natsServers: async () => (await nodes()).map((n) => `nats://${n.ip}:4222`),
  // Traces are the main compose test's (one Jaeger, nothing cluster-specific).
  invariants: (Object.keys(INVARIANTS) as Invariant[]).filter((invariant) => invariant !== "traces"),
});
const { h } = suite;

/** Each node's container and address on the project's network (the host reaches it there). */
async function nodes(): Promise<{ service: string; name: string; id: string; ip: string }[]> {
  return (await h.faults.replicas())
    .filter((r) => r.service in NODES)
    .map((r) => ({ service: r.service, name: NODES[r.service]!, id: r.id, ip: r.ip }));
}

async function nodeNamed(name: string) {
  const node = (await nodes()).find((n) => n.name === name);
  if (!node) throw new Error(`no NATS node ${name}`);
  return node;
}

interface Jsz {
  meta_cluster?: { leader?: string };
  account_details?: { stream_detail?: { name: string; cluster?: { leader?: string } }[] }[];
}

/** What one node's monitoring endpoint says of the leaders (undefined: it does not answer). */
async function leadersSeenBy(node: { ip: string }) {
  const jsz = await fetch(`http://${node.ip}:8222/jsz?accounts=true&streams=true`, {
    signal: AbortSignal.timeout(2_000),
  })
    .then((r) => r.json() as Promise<Jsz>)
    .catch(() => undefined);
  if (!jsz) return undefined;
  const streams = (jsz.account_details ?? []).flatMap((a) => a.stream_detail ?? []);
  return {
    meta: jsz.meta_cluster?.leader,
    streams: new Map(streams.map((s) => [s.name, s.cluster?.leader])),
  };
}

/** The meta leader as the first node that answers its monitoring endpoint sees it. */
async function metaLeader(): Promise<string | undefined> {
  for (const node of await nodes()) {
    const meta = (await leadersSeenBy(node))?.meta;
    if (meta) return meta;
  }
  return undefined;
}

/** Every stream's leader and whether all its replicas are current, from the stream's leader itself. */
async function streamStates(): Promise<{ name: string; leader?: string; current: boolean }[]> {
  const jsm = await jetstreamManager(await suite.nats());
  const states = [];
  for await (const s of jsm.streams.list()) {
    const replicas = s.cluster?.replicas ?? [];
    states.push({
      name: s.config.name,
      leader: s.cluster?.leader,
      current: replicas.length === 2 && replicas.every((r) => r.current && !r.offline),
    });
  }
  return states;
}

/** Polls `check` every 250 ms until it holds; the seconds since `from`, or undefined after `timeoutMs`. */
async function secondsUntil(from: number, check: () => Promise<boolean>, timeoutMs = 120_000) {
  for (const until = Date.now() + timeoutMs; Date.now() < until; await sleep(250))
    if (await check().catch(() => false)) return (Date.now() - from) / 1000;
  return undefined;
}

/** The longest any outbox row created in [from, to] waited to be published, in seconds, and in which schema. */
async function longestPublishWait(from: number, to: number): Promise<string> {
  const waits = await Promise.all(
    SCHEMAS.map(async (schema) => {
      const { rows } = await h.pool.query<{ s: number | null; n: string }>(
        `select extract(epoch from max(published_at - created_at))::float8 as s, count(*) as n from "${schema}".outbox
         where created_at between to_timestamp($1 / 1000.0) and to_timestamp($2 / 1000.0)`,
        [from, to],
      );
      return { schema, s: rows[0]?.s ?? 0, n: Number(rows[0]?.n ?? 0) };
    }),
  );
  const busy = waits.filter((w) => w.n > 0).sort((a, b) => b.s - a.s);
  return busy.length === 0
    ? "no outbox rows written meanwhile"
    : busy.map((w) => `${w.schema} ${w.s.toFixed(1)} s (${w.n} rows)`).join(", ");
}

/**
 * One node taken out (`how`), held for `holdMs` with the workload running, then brought back. Logs the seconds until
 * the streams it led had another leader, the longest publish wait of the outbox rows written meanwhile, and the
 * seconds from its return until every stream's replicas are current again.
 */
async function nodeLost(
  label: string,
  pick: () => Promise<string | undefined>,
  how: "kill" | "pause",
  holdMs: number,
): Promise<void> {
  const victim = await pick();
  if (!victim) throw new Error(`${label}: no leader to take out`);
  const node = await nodeNamed(victim);
  const container = docker.getContainer(node.id);
  const led = (await streamStates()).filter((s) => s.leader === victim).map((s) => s.name);
  const wasMetaLeader = (await metaLeader()) === victim;
  let lostAt = 0;
  let backAt = 0;
  // Timed from the node's return, alongside the wait for every service's readiness.
  let catchingUp: Promise<number | undefined> = Promise.resolve(undefined);
  const fault: Fault = {
    name: `${how} NATS ${victim} (${label})`,
    begin: async () => {
      lostAt = Date.now();
      await (how === "kill" ? container.kill() : container.pause());
    },
    holdMs,
    end: async () => {
      backAt = Date.now();
      await (how === "kill" ? container.start() : container.unpause());
      catchingUp = secondsUntil(backAt, async () => (await streamStates()).every((s) => s.current));
    },
  };
  // Read from the other nodes' monitoring endpoints, not through a client connection, which may itself be waiting
  // on the node taken out (a paused one until its pings go unanswered).
  const survivors = (await nodes()).filter((n) => n.name !== victim);
  let elected: number | undefined;
  let caughtUp: number | undefined;
  // The figures are logged whether or not the services recovered in time.
  try {
    await suite.survives(fault, [
      async () => {
        elected = await secondsUntil(lostAt, async () => {
          const views = await Promise.all(survivors.map(leadersSeenBy));
          const moved = (leader: string | undefined) => leader !== undefined && leader !== victim;
          return views.every(
            (view) =>
              view !== undefined &&
              (!wasMetaLeader || moved(view.meta)) &&
              led.every((stream) => moved(view.streams.get(stream))),
          );
        });
      },
    ]);
  } finally {
    caughtUp = await catchingUp;
    const stall = await longestPublishWait(lostAt - 1_000, backAt);
    h.log(
      `cluster: ${fault.name}: led ${wasMetaLeader ? "the meta group and " : ""}${led.length} stream(s) (${led.join(", ") || "none"}); ` +
        `new leaders after ${elected === undefined ? "NEVER" : `${elected.toFixed(1)} s`}; ` +
        `longest publish wait meanwhile: ${stall}; ` +
        `back and current on every stream ${caughtUp === undefined ? "NEVER" : `${caughtUp.toFixed(1)} s`} after its ${how === "kill" ? "restart" : "resume"}`,
    );
  }
  expect(elected, "the surviving nodes elect new leaders").toBeDefined();
  expect(caughtUp, "the node catches up on every stream").toBeDefined();
}

describe.sequential("the stack on a 3-node NATS cluster, every stream at 3 replicas", () => {
  beforeAll(async () => {
    const states = await streamStates();
    h.log(
      `cluster: ${states.length} streams, leaders ${states.map((s) => `${s.name}@${s.leader}`).join(", ")}`,
    );
    expect(states.length).toBeGreaterThan(0);
    expect(states.filter((s) => !s.current).map((s) => s.name)).toEqual([]);
    await suite.startWorkload();
  });

  it("a kill of the meta leader", async () => {
    await nodeLost("meta leader", metaLeader, "kill", 10_000);
  });

  it("a kill of the leader of VERIFIER", async () => {
    await nodeLost(
      "leader of VERIFIER",
      async () => (await streamStates()).find((s) => s.name === "VERIFIER")?.leader,
      "kill",
      10_000,
    );
  });

  it("a kill of the leader of PAYMENTS", async () => {
    await nodeLost(
      "leader of PAYMENTS",
      async () => (await streamStates()).find((s) => s.name === "PAYMENTS")?.leader,
      "kill",
      10_000,
    );
  });

  it("the leader of PAYMENTS paused for 20 s (cut off from the others)", async () => {
    await nodeLost(
      "leader of PAYMENTS",
      async () => (await streamStates()).find((s) => s.name === "PAYMENTS")?.leader,
      "pause",
      20_000,
    );
  });

  describe("once the workload is done and the system has settled", () => {
    invariantTests(suite);
  });
});
