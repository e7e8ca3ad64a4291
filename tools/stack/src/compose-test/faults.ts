// The faults of the compose test and the one way they are run (`underFault`): the scene set (untimed), the fault put
// in effect, what must also hold while it lasts checked, the fault lifted, then a wait until every replica of every
// service answers /readyz 200 again (bounded), timed from the moment the fault began.
// A fault declared an outage excuses 503s from its start until recovery; each replica kill is recorded with the
// moments before and after the kill, so that a 502 for a request in flight to the killed process (the proxy cannot
// resend a POST it already passed on) is told apart from any other.

import { spawn } from "node:child_process";
import { sleep } from "@humanpass/retry";
import { docker, type Replica } from "./docker.ts";
import type { Kill, Window } from "./invariants.ts";

export const SERVICE_PORTS: Record<string, number> = {
  verifier: 8080,
  "attestations-api": 8081,
  "agent-auth": 8082,
  "chain-indexer": 8083,
  "payment-gateway": 4021,
  webhooks: 8084,
};
export const SERVICES = Object.keys(SERVICE_PORTS);

/** What the faults act on, and what they leave behind for the invariants checked at the end. */
export interface FaultEnv {
  replicas(): Promise<Replica[]>;
  containers(service: string): Promise<string[]>;
  log(line: string): void;
  outages: Window[];
  kills: Kill[];
  /** Upper bound of each wait for readiness (each test checks its own, lower bound). */
  readyTimeoutMs: number;
  /**
   * CPU-bound processes run beside the stack from each fault's start until recovery (COMPOSE_TEST_HOGS), so that
   * recovery is measured as on a busy host: with as many as the machine has cores, each process gets about half.
   */
  hogs: number;
}

export interface Fault {
  name: string;
  /** 503s are expected from its start until every service is ready again. */
  outage?: boolean;
  /** Sets the scene; not part of the fault's timing. */
  prepare?(): Promise<void>;
  /** Puts the fault in effect; recovery is timed from the moment it is called. */
  begin(): Promise<void>;
  /** How long the fault lasts at least; checks run meanwhile, and it lasts until they are done. */
  holdMs?: number;
  /** Lifts the fault (starts what was stopped, resumes what was paused). */
  end(): Promise<void>;
}

/** A check made while a fault is in effect, e.g. "during this fault an alert fires"; it throws when it fails. */
export type DuringFault = (fault: Fault) => Promise<void>;

export interface Recovery {
  fault: string;
  /**
   * Seconds from the fault's start until every replica of every service answered /readyz 200, less the time checks
   * made the fault last beyond its own `holdMs`; undefined past the timeout.
   */
  seconds: number | undefined;
  /** The services still not ready at the poll before, the ones the recovery waited on last. */
  last: string[];
}

/**
 * Runs one fault to its end and the system back to ready. A failed check during the fault is thrown only once the
 * fault is lifted and every service ready again, so the next fault starts from a recovered system either way.
 */
export async function underFault(env: FaultEnv, fault: Fault, during: DuringFault[] = []): Promise<Recovery> {
  await fault.prepare?.();
  const stopHogs = startHogs(env.hogs);
  const since = Date.now();
  env.log(`fault: ${fault.name}${env.hogs > 0 ? ` (beside ${env.hogs} CPU-bound processes)` : ""}`);
  let failed: unknown;
  let begun = since;
  let lifted = since;
  let heldLonger = 0;
  let recovery: Recovery;
  try {
    try {
      await fault.begin();
      begun = Date.now();
      await Promise.all([sleep(fault.holdMs ?? 0), ...during.map((check) => check(fault))]);
    } catch (error) {
      failed = error;
    } finally {
      lifted = Date.now();
      await fault.end();
    }
    // A check waiting for an alert holds the fault longer than it would last by itself: that time is not recovery.
    heldLonger = Math.max(0, lifted - begun - (fault.holdMs ?? 0));
    recovery = { fault: fault.name, ...(await waitAllReady(env, since + heldLonger)) };
  } finally {
    stopHogs();
  }
  if (fault.outage) env.outages.push({ name: fault.name, from: since, to: Date.now() + 1_000 });
  const { seconds, last } = recovery;
  env.log(
    `fault: ${fault.name}: ${seconds === undefined ? "NOT ready in time" : `all ready after ${seconds.toFixed(1)} s`}${heldLonger > 0 ? ` (not counting ${(heldLonger / 1000).toFixed(1)} s held for checks)` : ""}${last.length > 0 ? ` (waiting on ${last.join(", ")} last)` : ""}`,
  );
  if (failed) throw failed;
  return recovery;
}

function startHogs(count: number): () => void {
  const hogs = Array.from({ length: count }, () =>
    spawn(process.execPath, ["-e", "for (;;);"], { stdio: "ignore" }),
  );
  return () => {
    for (const hog of hogs) hog.kill("SIGKILL");
  };
}

async function replicaReady(replica: Replica): Promise<boolean> {
  if (!replica.ip) return false;
  try {
    const r = await fetch(`http://${replica.ip}:${SERVICE_PORTS[replica.service]}/readyz`, {
      signal: AbortSignal.timeout(2_000),
    });
    return r.status === 200;
  } catch {
    return false;
  }
}

/** Polls every 250 ms until each service has replicas and all of them answer /readyz 200. */
export async function waitAllReady(
  env: Pick<FaultEnv, "replicas" | "readyTimeoutMs">,
  since: number,
): Promise<Omit<Recovery, "fault">> {
  let waitingOn: string[] = [];
  while (Date.now() - since < env.readyTimeoutMs) {
    const replicas = (await env.replicas()).filter((r) => r.service in SERVICE_PORTS);
    const ready = await Promise.all(replicas.map(replicaReady));
    const notReady = SERVICES.filter((service) => {
      const own = ready.filter((_, i) => replicas[i]!.service === service);
      return own.length === 0 || own.includes(false);
    });
    if (notReady.length === 0) return { seconds: (Date.now() - since) / 1000, last: waitingOn };
    waitingOn = notReady;
    await sleep(250);
  }
  return { seconds: undefined, last: waitingOn };
}

/** SIGKILL, recorded as a kill of the service between the moments before and after the call. */
async function kill(env: FaultEnv, service: string, id: string): Promise<void> {
  const from = Date.now();
  await docker.getContainer(id).kill();
  env.kills.push({ name: service, from, to: Date.now() });
}

/**
 * One replica (the first) of a service killed, and started again at once as an orchestrator would: a kill counts
 * as a manual stop, which the restart policy leaves alone.
 */
export function replicaKilled(env: FaultEnv, service: string): Fault {
  let id = "";
  return {
    name: `kill ${service}`,
    prepare: async () => {
      [id = ""] = await env.containers(service);
    },
    begin: () => kill(env, service, id),
    end: () => docker.getContainer(id).start(),
  };
}

/**
 * The chain-indexer killed while it backfills: every replica stopped, `backlog()` writes blocks meanwhile, one
 * replica started and killed as soon as its cursor has moved into the backlog (the test runs the indexer with a
 * small BLOCK_RANGE, so the backlog takes several commits), then all started again. Logs where the cursor was.
 */
export function indexerKilledDuringBackfill(
  env: FaultEnv,
  backlog: () => Promise<void>,
  chain: { cursor(): Promise<bigint>; head(): Promise<bigint> },
): Fault {
  let ids: string[] = [];
  let stoppedAt = -1n;
  let target = -1n;
  return {
    name: "kill chain-indexer during backfill",
    prepare: async () => {
      ids = await env.containers("chain-indexer");
      env.log("fault: chain-indexer stopped while blocks are written (backlog)");
      await Promise.all(ids.map((id) => docker.getContainer(id).stop({ t: 10 })));
      stoppedAt = await chain.cursor();
      await backlog();
      target = await chain.head();
      await docker.getContainer(ids[0]!).start();
      let at = stoppedAt;
      for (const until = Date.now() + 60_000; at === stoppedAt && Date.now() < until; ) {
        await sleep(50);
        at = await chain.cursor().catch(() => stoppedAt);
      }
    },
    begin: async () => {
      await kill(env, "chain-indexer", ids[0]!);
      const killedAt = await chain.cursor();
      env.log(
        `fault: the chain-indexer killed at cursor ${killedAt} of ${stoppedAt}→${target}${killedAt >= target ? " (backfill already done: not mid-backfill)" : ""}`,
      );
    },
    end: async () => {
      await Promise.all(ids.map((id) => docker.getContainer(id).start()));
    },
  };
}

export function natsPaused(env: FaultEnv, ms: number): Fault {
  let id = "";
  return {
    name: `NATS paused ${ms / 1000} s`,
    outage: true,
    prepare: async () => {
      [id = ""] = await env.containers("nats");
    },
    begin: () => docker.getContainer(id).pause(),
    holdMs: ms,
    end: () => docker.getContainer(id).unpause(),
  };
}

export function postgresRestarted(env: FaultEnv): Fault {
  let id = "";
  return {
    name: "Postgres restart",
    outage: true,
    prepare: async () => {
      [id = ""] = await env.containers("postgres");
    },
    begin: () => docker.getContainer(id).stop({ t: 10 }),
    end: () => docker.getContainer(id).start(),
  };
}

/**
 * A rolling restart of a service, as a release rolls out: each replica in turn stopped the way `docker stop` does
 * (SIGTERM, SIGKILL only past the grace period, the compose file's stop_grace_period), started again and waited for
 * on /readyz before the next one. Not an outage: the drain (SHUTDOWN_DRAIN_MS) and the proxy's retry of a refused
 * connection on another replica must leave no request unanswered.
 */
export function rollingRestart(env: FaultEnv, service: string, graceS = 40): Fault {
  let ids: string[] = [];
  return {
    name: `rolling restart of ${service}`,
    prepare: async () => {
      ids = await env.containers(service);
    },
    begin: async () => {
      for (const [i, id] of ids.entries()) {
        const container = docker.getContainer(id);
        const from = Date.now();
        await container.stop({ t: graceS });
        const stopped = Date.now();
        await container.start();
        for (const until = Date.now() + env.readyTimeoutMs; ; await sleep(250)) {
          const replica = (await env.replicas()).find((r) => r.id === id);
          if (replica && (await replicaReady(replica))) break;
          if (Date.now() > until) throw new Error(`${service} replica ${i + 1} not ready again in time`);
        }
        env.log(
          `fault: ${service} replica ${i + 1}: stopped in ${((stopped - from) / 1000).toFixed(1)} s (its drain included), ready ${((Date.now() - stopped) / 1000).toFixed(1)} s after`,
        );
      }
    },
    // Only what a failed step left stopped: the others run already.
    end: async () => {
      for (const id of ids) {
        const container = docker.getContainer(id);
        if (!(await container.inspect()).State.Running) await container.start();
      }
    },
  };
}
