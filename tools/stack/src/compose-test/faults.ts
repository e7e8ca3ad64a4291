// The faults of the compose test, each followed by a wait until every replica of every service answers /readyz
// 200 again (bounded). Outages (NATS paused, Postgres restarting) are declared as windows in which 503 is allowed;
// each replica kill is recorded with the moments before and after `docker kill`, so that a 502 for a request in
// flight to the killed process (the proxy cannot resend a POST it already passed on) is told apart from any other.
import { docker, type Replica } from "./docker";
import type { Kill, Window } from "./invariants";

export const SERVICE_PORTS: Record<string, number> = {
  verifier: 8080,
  "attestations-api": 8081,
  "agent-auth": 8082,
  "chain-indexer": 8083,
  "payment-gateway": 4021,
};

export interface FaultContext {
  containers(service: string): Promise<string[]>;
  replicas(): Promise<Replica[]>;
  log(line: string): void;
  outages: Window[];
  kills: Kill[];
  recovered: ({ fault: string } & Recovery)[];
  /** Upper bound of each wait for readiness (the invariant's bound is checked separately). */
  readyTimeoutMs: number;
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

export interface Recovery {
  /** Seconds from `since` until every replica of every service answered /readyz 200; undefined past the timeout. */
  seconds: number | undefined;
  /** The services still not ready at the poll before, the ones the recovery waited on last. */
  last: string[];
}

/** Polls every 250 ms until each service has replicas and all of them answer /readyz 200. */
export async function waitAllReady(ctx: FaultContext, since: number): Promise<Recovery> {
  let waitingOn: string[] = [];
  while (Date.now() - since < ctx.readyTimeoutMs) {
    const replicas = (await ctx.replicas()).filter((r) => r.service in SERVICE_PORTS);
    const ready = await Promise.all(replicas.map(replicaReady));
    const notReady = Object.keys(SERVICE_PORTS).filter((service) => {
      const own = ready.filter((_, i) => replicas[i]!.service === service);
      return own.length === 0 || own.includes(false);
    });
    if (notReady.length === 0) return { seconds: (Date.now() - since) / 1000, last: waitingOn };
    waitingOn = notReady;
    await new Promise((r) => setTimeout(r, 250));
  }
  return { seconds: undefined, last: waitingOn };
}

async function settle(ctx: FaultContext, fault: string, since: number, outage?: string): Promise<void> {
  const { seconds, last } = await waitAllReady(ctx, since);
  ctx.recovered.push({ fault, seconds, last });
  if (outage) ctx.outages.push({ name: outage, from: since, to: Date.now() + 1_000 });
  ctx.log(
    `fault: ${fault}: ${seconds === undefined ? "NOT ready in time" : `all ready after ${seconds.toFixed(1)} s`}${last.length > 0 ? ` (waiting on ${last.join(", ")} last)` : ""}`,
  );
}

/**
 * `docker kill` counts as a manual stop, which the restart policy leaves alone: callers start the container again at
 * once, as an orchestrator would.
 */
async function kill(ctx: FaultContext, service: string, id: string): Promise<void> {
  const from = Date.now();
  await docker("kill", id);
  ctx.kills.push({ name: service, from, to: Date.now() });
}

/** docker kill of one replica (the first) of each service, one service at a time. */
export async function killOneReplicaEach(ctx: FaultContext): Promise<void> {
  for (const service of Object.keys(SERVICE_PORTS)) {
    const [first] = await ctx.containers(service);
    if (!first) continue;
    const since = Date.now();
    ctx.log(`fault: docker kill one ${service} replica`);
    await kill(ctx, service, first);
    await docker("start", first);
    await settle(ctx, `kill ${service}`, since);
  }
}

/**
 * The chain-indexer killed while it backfills: every replica stopped, `backlog()` writes blocks meanwhile, one
 * replica started and killed as soon as its cursor has moved into the backlog (the test runs the indexer with a
 * small BLOCK_RANGE, so the backlog takes several commits), then all started again. Logs where the cursor was.
 */
export async function killIndexerDuringBackfill(
  ctx: FaultContext,
  backlog: () => Promise<void>,
  chain: { cursor(): Promise<bigint>; head(): Promise<bigint> },
): Promise<void> {
  const ids = await ctx.containers("chain-indexer");
  ctx.log("fault: chain-indexer stopped while blocks are written (backlog)");
  await docker("stop", "-t", "10", ...ids);
  const stoppedAt = await chain.cursor();
  await backlog();
  const target = await chain.head();
  await docker("start", ids[0]!);
  let at = stoppedAt;
  for (const until = Date.now() + 60_000; at === stoppedAt && Date.now() < until; ) {
    await new Promise((r) => setTimeout(r, 50));
    at = await chain.cursor().catch(() => stoppedAt);
  }
  // The fault is the kill: recovery is timed from it, not from the start that had to come first.
  const since = Date.now();
  await kill(ctx, "chain-indexer", ids[0]!);
  const killedAt = await chain.cursor();
  ctx.log(
    `fault: docker kill the chain-indexer during its backfill: cursor ${killedAt} of ${stoppedAt}→${target}${killedAt >= target ? " (backfill already done: not mid-backfill)" : ""}`,
  );
  await docker("start", ...ids);
  await settle(ctx, "kill chain-indexer during backfill", since);
}

export async function pauseNats(ctx: FaultContext, natsId: string, ms: number): Promise<void> {
  const since = Date.now();
  ctx.log(`fault: NATS paused for ${ms / 1000} s`);
  await docker("pause", natsId);
  await new Promise((r) => setTimeout(r, ms));
  await docker("unpause", natsId);
  await settle(ctx, `NATS paused ${ms / 1000} s`, since, "nats paused");
}

export async function restartPostgres(ctx: FaultContext, postgresId: string): Promise<void> {
  const since = Date.now();
  ctx.log("fault: Postgres restarted");
  await docker("restart", "-t", "10", postgresId);
  await settle(ctx, "Postgres restart", since, "postgres restart");
}
