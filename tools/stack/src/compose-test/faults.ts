// The faults of the compose test, each followed by a wait until every replica of every service answers /readyz
// 200 again (bounded). Outages (NATS paused, Postgres restarting) are declared as windows in which 503 is allowed;
// each replica kill is recorded with the moments before and after `docker kill`, so that a 502 for a request in
// flight to the killed process (the proxy cannot resend a POST it already passed on) is told apart from any other.
import { docker } from "./docker";
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
  log(line: string): void;
  outages: Window[];
  kills: Kill[];
  recovered: { fault: string; seconds: number | undefined }[];
  /** Upper bound of each wait for readiness (the invariant's bound is checked separately). */
  readyTimeoutMs: number;
}

async function ipOf(id: string): Promise<string> {
  return (await docker("inspect", "-f", "{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}", id))
    .trim()
    .split(" ")[0]!;
}

async function replicaReady(id: string, port: number): Promise<boolean> {
  try {
    const ip = await ipOf(id);
    if (!ip) return false;
    const r = await fetch(`http://${ip}:${port}/readyz`, { signal: AbortSignal.timeout(2_000) });
    return r.status === 200;
  } catch {
    return false;
  }
}

/** Seconds from `since` until every replica of every service answers /readyz 200; undefined past the timeout. */
export async function waitAllReady(ctx: FaultContext, since: number): Promise<number | undefined> {
  while (Date.now() - since < ctx.readyTimeoutMs) {
    const checks = await Promise.all(
      Object.entries(SERVICE_PORTS).map(async ([service, port]) => {
        const ids = await ctx.containers(service);
        const ready = await Promise.all(ids.map((id) => replicaReady(id, port)));
        return ids.length > 0 && ready.every(Boolean);
      }),
    );
    if (checks.every(Boolean)) return (Date.now() - since) / 1000;
    await new Promise((r) => setTimeout(r, 250));
  }
  return undefined;
}

async function settle(ctx: FaultContext, fault: string, since: number, outage?: string): Promise<void> {
  const seconds = await waitAllReady(ctx, since);
  ctx.recovered.push({ fault, seconds });
  if (outage) ctx.outages.push({ name: outage, from: since, to: Date.now() + 1_000 });
  ctx.log(
    `fault: ${fault}: ${seconds === undefined ? "NOT ready in time" : `all ready after ${seconds.toFixed(1)} s`}`,
  );
}

async function kill(ctx: FaultContext, service: string, id: string): Promise<void> {
  const from = Date.now();
  await docker("kill", id);
  ctx.kills.push({ name: service, from, to: Date.now() });
}

/** The restart policy brings a killed container back; should the engine not, this does, as an orchestrator would. */
async function restartIfDown(id: string): Promise<void> {
  await new Promise((r) => setTimeout(r, 3_000));
  if ((await docker("inspect", "-f", "{{.State.Running}}", id)).trim() !== "true") await docker("start", id);
}

/** docker kill of one replica (the first) of each service, one service at a time. */
export async function killOneReplicaEach(ctx: FaultContext): Promise<void> {
  for (const service of Object.keys(SERVICE_PORTS)) {
    const [first] = await ctx.containers(service);
    if (!first) continue;
    const since = Date.now();
    ctx.log(`fault: docker kill one ${service} replica`);
    await kill(ctx, service, first);
    await restartIfDown(first);
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
  await restartIfDown(ids[0]!);
  await docker("start", ...ids.slice(1));
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
