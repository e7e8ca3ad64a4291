// The invariants the compose test checks once the workload and the faults are over and the system has settled.
// Each returns a verdict: which invariant, whether it holds, and the figures behind it.

import { createPool } from "@humanpass/db";
import type { Devnet } from "@humanpass/devnet";
import { jetstreamManager, subjectMatches } from "@humanpass/event-bus";
import { sleep } from "@humanpass/retry";
import type { NatsConnection } from "@nats-io/transport-node";
import { type Address, parseAbiItem } from "viem";
import type { Response, WorkloadRecord } from "./workload.ts";

/** What each invariant guards, by the name its verdict carries. */
export const INVARIANTS = {
  served: "every attestation written on chain is served once (no gap, no duplicate)",
  revocations: "revocations applied",
  settledOnce: "every paid 200 has exactly one settlement",
  noOrphanSettlement: "no payment settled without a 200; balances match",
  usage: "per-human usage = human-tier 200s, reaching maxUse, never above",
  publishedOnce: "every outbox event published exactly once",
  appliedOnce: "every event applied once by each consumer (inbox vs stream)",
  serverErrors: "no response >= 500 but 503 in an outage, 502 in flight at a kill, and those declared",
  traces: "one trace id spans HTTP and NATS across >= 2 services (OTLP endpoint)",
} as const;
export type Invariant = keyof typeof INVARIANTS;

export interface Verdict {
  invariant: string;
  ok: boolean;
  detail: string;
}

/** Schemas with an outbox; those with durable consumers also have an inbox. */
export const SCHEMAS = [
  "verifier",
  "chain_indexer",
  "attestations",
  "agent_auth",
  "payment_gateway",
  "webhooks",
] as const;

export interface Window {
  name: string;
  from: number;
  to: number;
}

/** One replica of the service `name` killed: `docker kill` called at `from`, returned at `to`. */
export type Kill = Window;

const dupes = <T>(items: T[]) => items.length - new Set(items).size;

/** GET as JSON, waiting out a 429 or 503 (bounded: 10 tries), failing on anything else but 200. */
async function getJson<T>(url: string): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const r = await fetch(url);
    if (r.status === 200) return (await r.json()) as T;
    if ((r.status !== 429 && r.status !== 503) || attempt >= 10) throw new Error(`GET ${url}: ${r.status}`);
    await sleep(2_000);
  }
}

/** Every attestation written on chain during the run is served once by the API; revoked ones are revoked there. */
export async function attestationsServed(
  apiUrl: string,
  record: WorkloadRecord,
  attesterDids: string[],
): Promise<Verdict[]> {
  const listed: string[] = [];
  for (const did of attesterDids) {
    for (let page = 1; page <= 100; page++) {
      const body = await getJson<{ data: { id: string }[] }>(
        `${apiUrl}/api/v1/attestations?attesterDid=${encodeURIComponent(did)}&page_size=100&page_number=${page}`,
      );
      listed.push(...body.data.map((a) => a.id.toLowerCase()));
      if (body.data.length < 100) break;
    }
  }
  const live = record.attestations.filter((a) => !a.revoked).map((a) => a.id.toLowerCase());
  const revoked = record.attestations.filter((a) => a.revoked).map((a) => a.id.toLowerCase());
  const listedSet = new Set(listed);
  const missing = live.filter((id) => !listedSet.has(id)).length;
  const stillListed = revoked.filter((id) => listedSet.has(id)).length;
  const unknown = listed.filter((id) => !live.includes(id) && !revoked.includes(id)).length;
  let notRevoked = 0;
  for (const id of revoked) {
    const one = await getJson<{ revoked?: boolean }>(`${apiUrl}/api/v1/attestations/${id}`);
    if (one.revoked !== true) notRevoked++;
  }
  return [
    {
      invariant: INVARIANTS.served,
      ok: live.length > 0 && missing === 0 && dupes(listed) === 0 && unknown === 0,
      detail: `${live.length} live written, ${listed.length} listed, ${missing} missing, ${dupes(listed)} duplicated, ${unknown} unknown`,
    },
    {
      invariant: INVARIANTS.revocations,
      ok: revoked.length > 0 && stillListed === 0 && notRevoked === 0,
      detail: `${revoked.length} revoked on chain, ${stillListed} still listed, ${notRevoked} not marked revoked`,
    },
  ];
}

const transferEvent = parseAbiItem("event Transfer(address indexed from, address indexed to, uint256 value)");

/** Paid 200s against the chain's USDC transfers to the payee, and the gateway's per-human usage. */
export async function payments(options: {
  devnet: Devnet;
  usdc: Address;
  payee: Address;
  fromBlock: bigint;
  record: WorkloadRecord;
  agentHuman: Map<string, string>;
  humanTierPrice: bigint;
  maxUse: number;
  usage: Map<string, number>;
}): Promise<Verdict[]> {
  const { record } = options;
  const logs = await options.devnet.client.getLogs({
    address: options.usdc,
    event: transferEvent,
    args: { to: options.payee },
    fromBlock: options.fromBlock,
  });
  const settled = new Map(logs.map((l) => [l.transactionHash.toLowerCase(), l]));
  const ok200 = record.paid.filter((p) => p.status === 200);
  const txs = ok200.map((p) => p.tx?.toLowerCase() ?? "none");
  const unsettled = txs.filter((tx) => !settled.has(tx)).length;
  const txSet = new Set(txs);
  const orphan = [...settled.keys()].filter((tx) => !txSet.has(tx)).length;
  const nonOkWithTx = record.paid.filter((p) => p.status !== 200 && p.tx).length;
  const agents = new Set(record.paid.map((p) => p.agent.toLowerCase()));
  const paidByAgents = logs
    .filter((l) => agents.has(l.args.from!.toLowerCase()))
    .reduce((sum, l) => sum + l.args.value!, 0n);
  const received = logs.reduce((sum, l) => sum + l.args.value!, 0n);

  // Human-tier 200s per agent; the gateway keys usage by its own human id, which the test does not derive, so the
  // two are compared as per-human count multisets (agents of one human are grouped by the seed's pairings).
  const humanTier = new Map<string, number>();
  for (const p of ok200) {
    const log = p.tx ? settled.get(p.tx.toLowerCase()) : undefined;
    if (log?.args.value !== options.humanTierPrice) continue;
    const human = options.agentHuman.get(p.agent.toLowerCase()) ?? "unknown";
    humanTier.set(human, (humanTier.get(human) ?? 0) + 1);
  }
  const counts = (m: Map<string, number>) => [...m.values()].filter((n) => n > 0).sort((a, b) => a - b);
  const expected = counts(humanTier);
  const used = counts(options.usage);
  const mismatched = JSON.stringify(expected) !== JSON.stringify(used);
  const over = used.filter((n) => n > options.maxUse).length;
  return [
    {
      invariant: INVARIANTS.settledOnce,
      ok: ok200.length > 0 && unsettled === 0 && dupes(txs) === 0,
      detail: `${ok200.length} paid 200s, ${unsettled} without a transfer, ${dupes(txs)} sharing one`,
    },
    {
      invariant: INVARIANTS.noOrphanSettlement,
      ok: orphan === 0 && nonOkWithTx === 0 && paidByAgents === received,
      detail: `${settled.size} transfers to the payee, ${orphan} without a 200, ${nonOkWithTx} non-200 with a receipt; agents paid ${paidByAgents}, payee got ${received}`,
    },
    {
      invariant: INVARIANTS.usage,
      ok: expected.length > 0 && !mismatched && over === 0 && used.every((n) => n === options.maxUse),
      detail: `human-tier 200s per human [${expected.join(", ")}], usage rows grown by [${used.join(", ")}], maxUse ${options.maxUse}`,
    },
  ];
}

interface StreamMessage {
  stream: string;
  subject: string;
  msgId: string;
  eventId: string;
}

/** Every message of every stream the filter takes (bounded: the test writes a few thousand at most). */
async function streamMessages(
  nc: NatsConnection,
  ours: (stream: string) => boolean,
): Promise<StreamMessage[]> {
  const jsm = await jetstreamManager(nc);
  const out: StreamMessage[] = [];
  for await (const info of jsm.streams.list()) {
    if (!ours(info.config.name)) continue;
    const { first_seq, last_seq } = info.state;
    for (let seq = first_seq; seq <= last_seq && seq > 0 && out.length < 200_000; seq++) {
      const msg = await jsm.streams.getMessage(info.config.name, { seq }).catch(() => null);
      if (!msg) continue;
      out.push({
        stream: info.config.name,
        subject: msg.subject,
        msgId: msg.header?.get("Nats-Msg-Id") ?? "",
        eventId: (msg.json() as { id: string }).id,
      });
    }
  }
  return out;
}

/**
 * Outbox rows against stream messages, and each consumer's inbox against the messages it subscribes to. With a
 * `prefix` (a stack sharing its NATS server with others), only that topology's streams count; without, every one.
 */
export async function events(
  databaseUrl: string,
  nc: NatsConnection,
  options: { prefix?: string } = {},
): Promise<Verdict[]> {
  const ours = (stream: string) => !options.prefix || stream.startsWith(`${options.prefix.toUpperCase()}_`);
  const pool = createPool({ connectionString: databaseUrl, schema: "public", max: 2 });
  try {
    const messages = await streamMessages(nc, ours);
    const outbox: { id: string; published: boolean }[] = [];
    const inbox = new Map<string, string[]>();
    for (const schema of SCHEMAS) {
      const rows = await pool.query<{ id: string; published: boolean }>(
        `select id::text, published_at is not null as published from "${schema}".outbox`,
      );
      outbox.push(...rows.rows);
      const { rows: present } = await pool.query<{ inbox: string | null }>(
        "select to_regclass($1) as inbox",
        [`"${schema}".inbox`],
      );
      if (!present[0]?.inbox) continue;
      const consumed = await pool.query<{ consumer: string; event_id: string }>(
        `select consumer, event_id from "${schema}".inbox`,
      );
      for (const r of consumed.rows) inbox.set(r.consumer, [...(inbox.get(r.consumer) ?? []), r.event_id]);
    }
    const byMsgId = new Map<string, number>();
    for (const m of messages) byMsgId.set(m.msgId, (byMsgId.get(m.msgId) ?? 0) + 1);
    const unpublished = outbox.filter((o) => !o.published).length;
    const notOnce = outbox.filter((o) => byMsgId.get(o.id) !== 1).length;

    const jsm = await jetstreamManager(nc);
    const consumerRows: string[] = [];
    let consumerProblems = 0;
    for await (const stream of jsm.streams.list()) {
      if (!ours(stream.config.name)) continue;
      for await (const consumer of jsm.consumers.list(stream.config.name)) {
        // Durables only: ephemeral consumers (a tail, e.g. make demo's) keep no inbox.
        if (!consumer.config.durable_name) continue;
        const name = consumer.config.durable_name;
        const filters = consumer.config.filter_subjects ?? [consumer.config.filter_subject ?? ">"];
        const expected = messages
          .filter((m) => m.stream === stream.config.name && filters.some((f) => subjectMatches(f, m.subject)))
          .map((m) => m.eventId);
        const applied = inbox.get(name) ?? [];
        const appliedSet = new Set(applied);
        const missing = expected.filter((id) => !appliedSet.has(id)).length;
        const pending = consumer.num_pending + consumer.num_ack_pending;
        if (missing > 0 || dupes(applied) > 0 || pending > 0) consumerProblems++;
        consumerRows.push(
          `${name} ${applied.length}/${expected.length}${missing ? ` (${missing} missing)` : ""}${pending ? ` (${pending} pending)` : ""}`,
        );
      }
    }
    return [
      {
        invariant: INVARIANTS.publishedOnce,
        ok: outbox.length > 0 && unpublished === 0 && notOnce === 0,
        detail: `${outbox.length} outbox rows, ${messages.length} stream messages, ${unpublished} unpublished, ${notOnce} not exactly once on a stream`,
      },
      {
        invariant: INVARIANTS.appliedOnce,
        ok: consumerRows.length > 0 && consumerProblems === 0,
        detail: consumerRows.join("; "),
      },
    ];
  } finally {
    await pool.end();
  }
}

/**
 * A response the test provoked on purpose and whose 5xx status is the specified answer (e.g. spec 1's 500 for a
 * wallet token that does not verify): that one recorded response, with the status it must have had.
 */
export interface DeclaredResponse {
  response: Response;
  status: number;
  why: string;
}

/**
 * Server errors: none but 503s inside a declared outage, 502s for requests to a service that were in flight
 * while one of its replicas was killed (sent before `docker kill` returned, answered after it was called), and the
 * responses declared with the status they got.
 */
export function serverErrors(
  responses: Response[],
  outages: Window[],
  kills: Kill[],
  declared: DeclaredResponse[] = [],
): Verdict {
  const inOutage = (r: Response) => outages.some((w) => r.at >= w.from && r.at <= w.to);
  const inFlightAtKill = (r: Response) =>
    kills.some((k) => k.name === r.service && r.at <= k.to && r.at + r.ms >= k.from);
  const isDeclared = (r: Response) => declared.some((d) => d.response === r && d.status === r.status);
  const excused = responses.filter((r) => r.status === 502 && inFlightAtKill(r));
  const bad = responses.filter(
    (r) =>
      r.status === 0 ||
      (r.status >= 500 && !(r.status === 503 && inOutage(r)) && !excused.includes(r) && !isDeclared(r)),
  );
  const tally = (list: Response[]) => {
    const counts = new Map<string, number>();
    for (const r of list) {
      const key = `${r.service} ${r.method} ${r.path} ${r.status}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    return [...counts].map(([k, n]) => `${k} ×${n}`).join(", ");
  };
  return {
    invariant: INVARIANTS.serverErrors,
    ok: responses.length > 0 && bad.length === 0,
    detail:
      `${responses.length} responses, ${bad.length} bad${bad.length ? `: ${tally(bad)}` : ""}` +
      (excused.length ? `; in flight at a kill: ${tally(excused)}` : "") +
      (declared.length
        ? `; declared: ${declared.map((d) => `${tally([d.response])} (${d.why})`).join(", ")}`
        : ""),
  };
}

/** Every service ready again within the bound after each fault (undefined seconds: not within the wait). */
export function recoveries(
  recovered: { fault: string; seconds: number | undefined; last: string[] }[],
  boundSeconds: number,
): Verdict {
  const slow = recovered.filter((r) => r.seconds === undefined || r.seconds > boundSeconds);
  return {
    invariant: `every service back to /readyz 200 within ${boundSeconds} s of each fault`,
    ok: recovered.length > 0 && slow.length === 0,
    detail: recovered
      .map(
        (r) =>
          `${r.fault} ${r.seconds === undefined ? "never" : `${r.seconds.toFixed(1)} s`}${slow.includes(r) ? ` (waiting on ${r.last.join(", ")})` : ""}`,
      )
      .join("; "),
  };
}
