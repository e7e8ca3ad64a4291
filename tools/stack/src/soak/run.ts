// The soak driver shared by `npm run bench -- soak` (30 minutes, judged and tabled) and `make test-soak` (3 minutes,
// leak checks asserted): a fresh `make up` stack (own database, stream prefix, free ports) under a fixed mixed
// load, every service's /metrics sampled at a fixed interval, then, once the load stopped and the system settled,
// the samples at rest and the exact counts of the compose suite's invariants.

import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import { loadavg } from "node:os";
import { createPool, dropDatabase } from "@humanpass/db";
import { type DevnetAccount, identityFromAddress, setAutomine } from "@humanpass/devnet";
import { deletePrefixedStreams, jetstreamManager } from "@humanpass/event-bus";
import { sleep } from "@humanpass/retry";
import { freePort } from "@humanpass/testing/ports";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import {
  attestationsServed,
  events,
  payments,
  SCHEMAS,
  serverErrors,
  type Verdict,
} from "../compose-test/invariants.ts";
import { type Response, recordingFetch, runWorkload, type WorkloadRecord } from "../compose-test/workload.ts";
import {
  DEV_WEBHOOKS_ADMIN_TOKEN,
  type LogSink,
  randomPrefix,
  SERVICE_NAMES,
  type Stack,
  startStack,
} from "../stack.ts";
import { postTracedCallback, TOKEN_NOT_VERIFIED } from "../verification-callback.ts";
import { p99PerMinute } from "./analysis.ts";
import { sampleServices, type Tick } from "./sampler.ts";

/** Requests (or chain writes) per second of each kind. */
export interface SoakRates {
  /** Wallet callbacks to the verifier (a session, then the fixture token: a full proof verification each). */
  callbacks: number;
  /** Reads of the attestations API (by recipient, by id, a human's nullifier). */
  lookups: number;
  /** Agent claims (challenge, then signed claim) to agent-auth. */
  claims: number;
  /** x402 paid requests to the gateway, each settled on the devnet. */
  paid: number;
  /** Attestations written on chain (every third revoked again), which the indexer carries to the API. */
  chain: number;
}

export interface SoakOptions {
  /** Any database on the server; the soak creates its own and drops it at the end. */
  databaseUrl: string;
  natsUrl: string;
  minutes: number;
  warmupMinutes: number;
  sampleSeconds: number;
  rates: SoakRates;
  /** Progress lines. */
  log: (line: string) => void;
  /** The services' own output (warnings and errors: they run at LOG_LEVEL=warn). */
  serviceLog: LogSink;
  /** Ends the load early (Ctrl-C); the soak still settles, checks and cleans up. */
  signal?: AbortSignal;
}

export interface SoakResult {
  prefix: string;
  startedAt: string;
  options: Pick<SoakOptions, "minutes" | "warmupMinutes" | "sampleSeconds" | "rates">;
  services: string[];
  /** Samples while the load ran (t: seconds since it started). */
  ticks: Tick[];
  /** Samples once the load stopped and the outboxes and consumers had caught up. */
  rest: Tick[];
  /** Per service called, the p99 (ms) of its responses in each minute of the load. */
  p99PerMinute: Record<string, (number | null)[]>;
  counts: Record<string, number>;
  /** The exact counts: outbox = stream, inbox = applied, payments = transfers, no unexpected response. */
  invariants: Verdict[];
  settled: boolean;
  loadAverage: { before: number[]; after: number[] };
}

/** Rates from SOAK_RATE_<KIND> (per second), with defaults a 2-core machine carries beside the stack itself. */
export function ratesFromEnv(env: NodeJS.ProcessEnv = process.env): SoakRates {
  const rate = (name: string, fallback: number) => Number(env[`SOAK_RATE_${name}`] ?? fallback);
  return {
    callbacks: rate("CALLBACKS", 0.2),
    lookups: rate("LOOKUPS", 5),
    claims: rate("CLAIMS", 2),
    paid: rate("PAID", 1),
    chain: rate("CHAIN", 0.5),
  };
}

// The weather route's human tier (services/payment-gateway/config/routes.json): $0.001 in USDC units, 5 uses a human.
const HUMAN_TIER_PRICE = 1_000n;
const MAX_USE = 5;
/** Requests of one paced loop in flight at most: a stalled service is not buried under a growing backlog. */
const MAX_IN_FLIGHT = 32;
const SETTLE_TIMEOUT_MS = 180_000;
const REST_SAMPLES = 5;

/**
 * Calls `once` `rate` times a second on a fixed schedule until `done()`, whatever each call takes (open loop),
 * skipping a beat while MAX_IN_FLIGHT calls are still open. Resolves once the last call has.
 */
async function paced(rate: number, done: () => boolean, once: () => Promise<unknown>): Promise<void> {
  if (rate <= 0) return;
  const open = new Set<Promise<unknown>>();
  const start = Date.now();
  for (let i = 0; ; i++) {
    await sleep(Math.max(0, start + (i * 1000) / rate - Date.now()));
    if (done()) break;
    if (open.size >= MAX_IN_FLIGHT) continue;
    // Failures are in the record (status 0 or the status answered); the loop goes on.
    const call: Promise<unknown> = once()
      .catch(() => undefined)
      .finally(() => open.delete(call));
    open.add(call);
  }
  await Promise.all(open);
}

/** A webhook endpoint that accepts every delivery, for the webhooks service to have somewhere to deliver. */
async function startReceiver(): Promise<{ url: string; deliveries: () => number; close(): Promise<void> }> {
  let deliveries = 0;
  const server: Server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      deliveries++;
      response.writeHead(204).end();
    });
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    deliveries: () => deliveries,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Every outbox drained and every durable consumer of the stack's streams caught up (bounded). */
async function settle(databaseUrl: string, nc: NatsConnection, prefix: string): Promise<boolean> {
  const pool = createPool({ connectionString: databaseUrl, schema: "public", max: 1 });
  const unpublished = SCHEMAS.map(
    (s) => `select count(*) as n from "${s}".outbox where published_at is null`,
  );
  const jsm = await jetstreamManager(nc);
  try {
    for (const until = Date.now() + SETTLE_TIMEOUT_MS; Date.now() < until; await sleep(1_000)) {
      const { rows } = await pool.query<{ n: string }>(unpublished.join(" union all "));
      let behind = rows.reduce((sum, row) => sum + Number(row.n), 0);
      for await (const stream of jsm.streams.list()) {
        if (!stream.config.name.startsWith(`${prefix.toUpperCase()}_`)) continue;
        for await (const c of jsm.consumers.list(stream.config.name))
          if (c.config.durable_name) behind += c.num_pending + c.num_ack_pending;
      }
      if (behind === 0) return true;
    }
    return false;
  } finally {
    await pool.end();
  }
}

async function lookup(stack: Stack, fetcher: typeof fetch, record: WorkloadRecord, i: number): Promise<void> {
  const api = `${stack.urls["attestations-api"]}/api/v1`;
  const pairing = stack.seed.pairings[i % stack.seed.pairings.length]!;
  const written = record.attestations.at(-1 - (i % 10));
  const urls = [
    `${api}/attestations?schemaId=${stack.seed.schemas.agentOwnership}&recipientEthereumAddress=${pairing.recipient.ethereumAddress}`,
    `${api}/nullifier?userId=${stack.humans[i % stack.humans.length]!.userId}`,
    written ? `${api}/attestations/${written.id}` : `${api}/attestations/${pairing.id}`,
  ];
  await (await fetcher(urls[i % urls.length]!)).arrayBuffer();
}

/** The compose suite's invariants on what the load left: events, attestations, payments, responses. */
async function exactCounts(options: {
  stack: Stack;
  databaseUrl: string;
  nc: NatsConnection;
  record: WorkloadRecord;
  attesters: DevnetAccount[];
  fromBlock: bigint;
  /** Every response but those expected to be 5xx. */
  responses: Response[];
}): Promise<Verdict[]> {
  const { stack, databaseUrl, record } = options;
  const { devnet } = stack;
  const pool = createPool({ connectionString: databaseUrl, schema: "public", max: 1 });
  const usage = await pool
    .query<{ human_id: string; count: number }>("select human_id, count from payment_gateway.human_usage")
    .finally(() => pool.end());
  return [
    ...(await events(databaseUrl, options.nc, { prefix: stack.prefix })),
    ...(await attestationsServed(
      stack.urls["attestations-api"],
      record,
      options.attesters.map((a) => identityFromAddress(a.address).did),
    )),
    ...(await payments({
      devnet,
      usdc: devnet.addresses.usdc,
      payee: devnet.accounts[9]!.address,
      fromBlock: options.fromBlock,
      record,
      agentHuman: new Map(
        stack.seed.pairings.map((p) => [
          p.recipient.ethereumAddress.toLowerCase(),
          String(p.attester.iden3Id),
        ]),
      ),
      humanTierPrice: HUMAN_TIER_PRICE,
      maxUse: MAX_USE,
      usage: new Map(usage.rows.map((r) => [r.human_id, r.count])),
    })),
    serverErrors(options.responses, [], []),
  ];
}

async function soak(stack: Stack, options: SoakOptions, databaseUrl: string, nc: NatsConnection) {
  const { devnet, urls } = stack;
  const receiver = await startReceiver();
  try {
    const registered = await fetch(`${urls.webhooks}/admin/v1/endpoints`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${DEV_WEBHOOKS_ADMIN_TOKEN}` },
      body: JSON.stringify({
        url: receiver.url,
        eventTypes: ["agent_auth.human_verified", "chain.attestation_recorded", "payments.payment_settled"],
      }),
    });
    if (registered.status !== 201) throw new Error(`webhook endpoint not registered: ${registered.status}`);

    const { rates } = options;
    // Accounts 4-7 are the demo humans' agents; 10-11 send nothing else (stack.ts), so their nonces are ours.
    const agents = devnet.accounts.slice(4, 8);
    const attesters = devnet.accounts.slice(10, 12);
    const record: WorkloadRecord = { responses: [], attestations: [], claims: [], paid: [] };
    const callbacks: Response[] = [];
    const fromBlock = (await devnet.client.getBlockNumber({ cacheTime: 0 })) + 1n;
    const loadBefore = loadavg();
    const start = Date.now();
    const end = start + options.minutes * 60_000;
    const stopped = () => options.signal?.aborted === true;
    const done = () => Date.now() >= end || stopped();
    const ticks: Tick[] = [];
    options.log(
      `load for ${options.minutes} min (warm-up ${options.warmupMinutes}), per second: ${JSON.stringify(rates)}`,
    );

    const sampling = (async () => {
      for (let i = 0; start + i * options.sampleSeconds * 1000 <= end && !stopped(); i++) {
        await sleep(Math.max(0, start + i * options.sampleSeconds * 1000 - Date.now()));
        ticks.push(await sampleServices(urls, (Date.now() - start) / 1000));
        if (i > 0 && (i * options.sampleSeconds) % 60 === 0)
          options.log(
            `minute ${(i * options.sampleSeconds) / 60}: ${record.responses.length + callbacks.length} responses, ` +
              `${record.paid.length} paid, ${record.attestations.length} attestations, load ${loadavg()[0]!.toFixed(2)}`,
          );
      }
    })();
    // The workload's loops pause between rounds: a pause of (senders / rate) gives at most `rate` per second.
    const gap = (senders: number, rate: number) => (rate > 0 ? (senders * 1000) / rate : 0);
    const lookups = recordingFetch(urls, record.responses);
    let lookupsSent = 0;
    await Promise.all([
      runWorkload({
        devnet,
        urls,
        usdc: devnet.addresses.usdc,
        chainId: devnet.chainId,
        attesters,
        reviewSchema: stack.seed.schemas.review,
        agents,
        attestationsPerAttester: rates.chain > 0 ? Number.POSITIVE_INFINITY : 0,
        claimsPerAgent: rates.claims > 0 ? Number.POSITIVE_INFINITY : 0,
        paidPerAgent: rates.paid > 0 ? Number.POSITIVE_INFINITY : 0,
        deadline: end,
        done: stopped,
        gaps: {
          attestationMs: gap(attesters.length, rates.chain),
          claimMs: gap(agents.length, rates.claims),
          paidMs: gap(agents.length, rates.paid),
        },
        record,
      }),
      paced(rates.lookups, done, () => lookup(stack, lookups, record, lookupsSent++)),
      paced(rates.callbacks, done, () => postTracedCallback(urls.verifier, recordingFetch(urls, callbacks))),
      sampling,
    ]);
    const loadAfter = loadavg();
    options.log(`load stopped after ${((Date.now() - start) / 60_000).toFixed(1)} min; settling`);

    const settled = await settle(databaseUrl, nc, stack.prefix);
    const rest: Tick[] = [];
    for (let i = 0; i < REST_SAMPLES; i++, await sleep(2_000))
      rest.push(await sampleServices(urls, (Date.now() - start) / 1000));

    // The fixture token's answer is spec 1's 500 for a token that does not verify: expected, so not a server error.
    const verified = callbacks.filter((r) => r.path === "/api/callback");
    const notVerified = new Set(verified.filter((r) => r.status === TOKEN_NOT_VERIFIED.status));
    const responses = [...record.responses, ...callbacks];
    const invariants = await exactCounts({
      stack,
      databaseUrl,
      nc,
      record,
      attesters,
      fromBlock,
      responses: responses.filter((r) => !notVerified.has(r)),
    });
    const minutes = p99PerMinute(responses, start);
    return {
      ticks,
      rest,
      settled,
      invariants,
      loadAverage: { before: loadBefore, after: loadAfter },
      p99PerMinute: Object.fromEntries(
        [...minutes].map(([service, values]) => [service, values.map((v) => v ?? null)]),
      ),
      counts: {
        responses: responses.length,
        callbacks: verified.length,
        "callbacks answered 500 (the fixture token does not verify)": notVerified.size,
        lookups: lookupsSent,
        claims: record.claims.length,
        paid: record.paid.length,
        attestations: record.attestations.length,
        revoked: record.attestations.filter((a) => a.revoked).length,
        webhookDeliveries: receiver.deliveries(),
      },
    };
  } finally {
    await receiver.close();
  }
}

/** Runs a soak on a stack of its own and removes everything it made (database, streams, processes) after. */
export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const url = new URL(options.databaseUrl);
  url.pathname = `/soak_${randomBytes(4).toString("hex")}`;
  const databaseUrl = url.toString();
  const prefix = randomPrefix();
  const startedAt = new Date().toISOString();
  const nc = await connect({ servers: options.natsUrl });
  let stack: Stack | undefined;
  try {
    options.log(`starting the stack (devnet, six services) under ${prefix}`);
    const rateLimits = { RATE_LIMIT_MAX: "1000000" };
    stack = await startStack({
      databaseUrl,
      natsUrl: options.natsUrl,
      prefix,
      ports: "free",
      blockIntervalSeconds: 1,
      logLevel: "warn",
      env: Object.fromEntries(SERVICE_NAMES.map((name) => [name, rateLimits])),
      log: options.serviceLog,
    });
    // Automine gives every transaction a block of its own, each a second after the one before: at more than one a
    // second the chain's clock runs ahead of the wall's (5 minutes ahead after 4 here) until the gateway's x402
    // authorizations, valid for minutes, are refused as expired. One block a second holding whatever arrived keeps
    // the two together, as on a live chain.
    await setAutomine(stack.devnet, false);
    const outcome = await soak(stack, options, databaseUrl, nc);
    return {
      prefix,
      startedAt,
      options: {
        minutes: options.minutes,
        warmupMinutes: options.warmupMinutes,
        sampleSeconds: options.sampleSeconds,
        rates: options.rates,
      },
      services: [...SERVICE_NAMES],
      ...outcome,
    };
  } finally {
    await stack?.stop();
    await deletePrefixedStreams(await jetstreamManager(nc), { prefix });
    await nc.close();
    await dropDatabase(databaseUrl);
  }
}
