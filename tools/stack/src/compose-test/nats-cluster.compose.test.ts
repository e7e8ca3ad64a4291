// make test-compose-cluster (vitest.compose-cluster.config.ts), once scripts/compose/test-cluster.sh has the stack up
// with NATS as a 3-node JetStream cluster and every stream at 3 replicas (docker-compose.cluster.yml): while a
// bounded workload runs, the meta leader is killed, then the leader of VERIFIER, then the leader of PAYMENTS, each
// started again before the next, then the leader of PAYMENTS is paused for 20 s (a node cut off). No fault is
// declared an outage: a cluster that lost one node of three must keep serving. The invariants of the compose test
// then hold over what the workload did.
// Figures logged per fault: how long until the streams had a leader again, the longest an outbox row waited for its
// PubAck around the fault (publishing stalled), and how long the node took, once back, to be current on every stream.
import { setTimeout as sleep } from "node:timers/promises";
import { type DevnetAccount, identityFromAddress } from "@humanpass/devnet";
import { jetstreamManager } from "@humanpass/event-bus";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import type { Address, Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { docker } from "./docker.ts";
import { type Fault, type Recovery, underFault } from "./faults.ts";
import { type Harness, humanUsage, openHarness, settle } from "./harness.ts";
import {
  attestationsServed,
  events,
  INVARIANTS,
  type Invariant,
  payments,
  recoveries,
  SCHEMAS,
  serverErrors,
  type Verdict,
} from "./invariants.ts";
import { runWorkload, type WorkloadOptions } from "./workload.ts";

const env = process.env;
const READY_BOUND_S = 30;
const MAX_USE = 5;
const HUMAN_TIER_PRICE = 1_000n;
/** The compose services of the nodes, and the server names docker-compose.cluster.yml gives them. */
const NODES: Record<string, string> = { nats: "nats-0", "nats-1": "nats-1", "nats-2": "nats-2" };

const h: Harness = await openHarness();
const payee = h.summary.accounts[9]!.address as Address;
const attesters = h.summary.accounts.slice(11, 13) as DevnetAccount[];
const attesterDids = attesters.map((a) => identityFromAddress(a.address).did);
const agentHuman = new Map(
  h.summary.seed.pairings.map((p) => [p.recipient.ethereumAddress.toLowerCase(), p.attester.iden3Id]),
);
const recovered: Recovery[] = [];
let faultsDone = false;
const workload: WorkloadOptions = {
  devnet: h.devnet,
  urls: h.stack.urls,
  usdc: h.stack.usdc,
  chainId: h.stack.chainId,
  attesters,
  reviewSchema: h.summary.seed.schemas.review as Hex,
  agents: h.stack.pairedAgents.map((a) => ({
    address: a.address,
    privateKey: a.privateKey,
  })) as DevnetAccount[],
  attestationsPerAttester: Number(env.COMPOSE_TEST_ATTESTATIONS || 40),
  claimsPerAgent: Number(env.COMPOSE_TEST_CLAIMS || 80),
  paidPerAgent: Number(env.COMPOSE_TEST_PAID || 10),
  minPaidPerAgent: MAX_USE + 1,
  done: () => faultsDone,
  gaps: { attestationMs: 1_500, claimMs: 1_000, paidMs: 6_000 },
  deadline: 0,
  record: h.record,
};

let nc: NatsConnection;

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

/** The meta leader as the first node that answers its monitoring endpoint sees it. */
async function metaLeader(): Promise<string | undefined> {
  for (const node of await nodes()) {
    const jsz = await fetch(`http://${node.ip}:8222/jsz`, { signal: AbortSignal.timeout(2_000) })
      .then((r) => r.json() as Promise<{ meta_cluster?: { leader?: string } }>)
      .catch(() => undefined);
    if (jsz?.meta_cluster?.leader) return jsz.meta_cluster.leader;
  }
  return undefined;
}

/** Every stream's leader and whether all its replicas are current, from the stream's leader itself. */
async function streamStates(): Promise<{ name: string; leader?: string; current: boolean }[]> {
  const jsm = await jetstreamManager(nc);
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
  let elected: number | undefined;
  const recovery = await underFault(h.faults, fault, [
    async () => {
      elected = await secondsUntil(lostAt, async () => {
        const states = await streamStates();
        const meta = wasMetaLeader ? await metaLeader() : undefined;
        return (
          (!wasMetaLeader || (meta !== undefined && meta !== victim)) &&
          states.every((s) => !led.includes(s.name) || (s.leader !== undefined && s.leader !== victim))
        );
      });
    },
  ]);
  recovered.push(recovery);
  const caughtUp = await catchingUp;
  const stall = await longestPublishWait(lostAt - 1_000, backAt);
  h.log(
    `cluster: ${fault.name}: led ${wasMetaLeader ? "the meta group and " : ""}${led.length} stream(s) (${led.join(", ") || "none"}); ` +
      `new leaders after ${elected === undefined ? "NEVER" : `${elected.toFixed(1)} s`}; ` +
      `longest publish wait meanwhile: ${stall}; ` +
      `back and current on every stream ${caughtUp === undefined ? "NEVER" : `${caughtUp.toFixed(1)} s`} after its ${how === "kill" ? "restart" : "resume"}`,
  );
  expect(elected, "the surviving nodes elect new leaders").toBeDefined();
  expect(caughtUp, "the node catches up on every stream").toBeDefined();
  const verdict = recoveries([recovery], READY_BOUND_S);
  expect(verdict.ok, `${verdict.invariant}: ${verdict.detail}`).toBe(true);
}

afterAll(async () => {
  await nc?.close();
  await h.pool.end();
});

describe.sequential("the stack on a 3-node NATS cluster, every stream at 3 replicas", () => {
  let running: Promise<void>;
  let usageBefore: Map<string, number>;
  let fromBlock: bigint;

  beforeAll(async () => {
    // The operator, to every node: its address on the project's network (reachable from the host).
    nc = await connect({
      servers: (await nodes()).map((n) => `nats://${n.ip}:4222`),
      name: "compose-cluster-test",
      ...h.stack.natsUser,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      // A paused node answers no ping: this client moves to another node within seconds (the default: minutes), so
      // the leaders are read while the pause lasts.
      pingInterval: 2_000,
      maxPingOut: 2,
    });
    const states = await streamStates();
    h.log(
      `cluster: ${states.length} streams, leaders ${states.map((s) => `${s.name}@${s.leader}`).join(", ")}`,
    );
    expect(states.length).toBeGreaterThan(0);
    expect(states.filter((s) => !s.current).map((s) => s.name)).toEqual([]);
    usageBefore = await humanUsage(h);
    fromBlock = (await h.devnet.client.getBlockNumber()) + 1n;
    workload.deadline = Date.now() + Number(env.COMPOSE_TEST_WORKLOAD_S || 480) * 1000;
    h.log(
      `workload: ${attesters.length} attesters, ${workload.agents.length} agents, until ${new Date(workload.deadline).toISOString()}`,
    );
    running = runWorkload(workload);
    running.catch(() => {});
    await sleep(5_000);
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
    let verdicts: Verdict[];
    const verdict = (invariant: Invariant) => verdicts.find((v) => v.invariant === INVARIANTS[invariant]);

    beforeAll(async () => {
      faultsDone = true;
      await running;
      const { record } = h;
      h.log(
        `workload done: ${record.attestations.length} attestations, ${record.claims.length} claims, ${record.paid.length} paid requests, ${record.responses.length} responses`,
      );
      h.log(`recovery: ${recoveries(recovered, READY_BOUND_S).detail}`);
      if (!(await settle(h, attesterDids, 120_000))) h.log("settle: not settled in time; checking anyway");
      const usageNow = await humanUsage(h);
      const usage = new Map([...usageNow].map(([human, n]) => [human, n - (usageBefore.get(human) ?? 0)]));
      verdicts = [
        ...(await attestationsServed(h.stack.urls["attestations-api"], h.record, attesterDids)),
        ...(await payments({
          devnet: h.devnet,
          usdc: h.stack.usdc as Address,
          payee,
          fromBlock,
          record: h.record,
          agentHuman,
          humanTierPrice: HUMAN_TIER_PRICE,
          maxUse: MAX_USE,
          usage,
        })),
        ...(await events(h.databaseUrl, nc)),
        serverErrors(h.record.responses, h.faults.outages, h.faults.kills),
      ];
    }, 600_000);

    // Traces are the main compose test's (one Jaeger, nothing cluster-specific).
    it.each(Object.entries(INVARIANTS).filter(([invariant]) => invariant !== "traces"))(
      "%s: %s",
      (invariant) => {
        const v = verdict(invariant as Invariant);
        if (!v) throw new Error(`no verdict for ${invariant}`);
        h.log(`${v.ok ? "holds" : "FAILS"}: ${v.invariant}: ${v.detail}`);
        expect(v.ok, v.detail).toBe(true);
      },
    );
  });
});
