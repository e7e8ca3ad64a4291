// make test-compose, once scripts/compose/test.sh has the stack up with 2 replicas of every service: `make demo`
// against it, traces across services, then a bounded workload while faults are injected, then the invariants as a
// table. Exit status 1 when one fails. COMPOSE_TEST_PROVE=1 then breaks, one after the other, what each invariant
// guards in the settled system and shows that its check fails.
import { execFileSync } from "node:child_process";
import { createPool } from "@humanpass/db";
import { ABIs, connectDevnet, type DevnetAccount, identityFromAddress } from "@humanpass/devnet";
import { jetstreamManager } from "@humanpass/events";
import { connect } from "@nats-io/transport-node";
import type { Address, Hex } from "viem";
import { devnetSummary } from "../compose-devnet";
import { REPO_ROOT } from "../processes";
import { readStackFile } from "../stack-file";
import { composeOf, docker } from "./docker";
import {
  type FaultContext,
  killIndexerDuringBackfill,
  killOneReplicaEach,
  pauseNats,
  restartPostgres,
} from "./faults";
import {
  attestationsServed,
  events,
  payments,
  printTable,
  recoveries,
  serverErrors,
  type Verdict,
} from "./invariants";
import { traces } from "./traces";
import { recordingFetch, runWorkload, type WorkloadRecord, writeAttestations } from "./workload";

const out = (line: string) => process.stdout.write(`${line}\n`);
const log = (line: string) => out(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
const env = process.env;
const project = env.COMPOSE_PROJECT_NAME || "humanpass";
const stack = readStackFile();
const summary = devnetSummary();
if (!stack || !summary) {
  process.stderr.write("compose test: the stack is not up (scripts/compose/test.sh starts it)\n");
  process.exit(1);
}
const { containers, replicas } = composeOf(project);
const databaseUrl = `postgres://postgres:${env.POSTGRES_PASSWORD || "humanpass"}@127.0.0.1:${env.POSTGRES_PORT || 55432}/humanpass`;
const jaegerUrl = `http://127.0.0.1:${env.JAEGER_UI_PORT || 16686}`;
const READY_BOUND_S = 30;
const MAX_USE = 5;
const HUMAN_TIER_PRICE = 1_000n;
const PAYEE = summary.accounts[9]!.address as Address;

const devnet = connectDevnet({
  rpcUrl: stack.devnetRpcUrl,
  chainId: summary.chainId,
  addresses: {
    schemaRegistry: summary.schemaRegistry,
    legacySchemaRegistry: summary.legacySchemaRegistry,
    attestationRegistry: summary.attestationRegistry,
    usdc: summary.usdc,
    multicall3: summary.multicall3,
  } as never,
  accounts: summary.accounts as DevnetAccount[],
});

const verdicts: Verdict[] = [];

// 1. The demo, as a user runs it.
log("make demo against the compose stack …");
let demoOutput = "";
let demoOk = false;
try {
  demoOutput = execFileSync("make", ["-s", "demo"], {
    cwd: REPO_ROOT,
    encoding: "utf8",
    env: { ...env },
    timeout: 180_000,
  });
  demoOk = /discounted \(human\) tier/.test(demoOutput) && /standard tier/.test(demoOutput);
} catch (error) {
  const failure = error as { stdout?: string; stderr?: string };
  demoOutput = `${failure.stdout ?? ""}\n${failure.stderr ?? String(error)}`;
}
verdicts.push({
  invariant: "make demo passes (human tier until max_use_exceeded, then standard)",
  ok: demoOk,
  detail: `${demoOutput.match(/#\d+: \d+/g)?.join(", ") ?? "no payments"}; ${(demoOutput.match(/\[event\]/g) ?? []).length} events printed`,
});
if (!demoOk) out(demoOutput);

// 2. The workload under faults.
const usageBefore = await usage();
const fromBlock = (await devnet.client.getBlockNumber()) + 1n;
const attesters = summary.accounts.slice(11, 13) as DevnetAccount[];
// The backlog written while the indexers are down has its own senders, so no two loops share a nonce sequence.
const backlogAttesters = summary.accounts.slice(13, 15) as DevnetAccount[];
const agents = stack.pairedAgents.map((a) => ({
  address: a.address,
  privateKey: a.privateKey,
})) as DevnetAccount[];
const attesterDids = [...attesters, ...backlogAttesters].map((a) => identityFromAddress(a.address).did);
const record: WorkloadRecord = { responses: [], attestations: [], claims: [], paid: [] };
const started = Date.now();
const deadline = started + Number(env.COMPOSE_TEST_WORKLOAD_S || 240) * 1000;
const natsId = (await containers("nats"))[0]!;
const postgresId = (await containers("postgres"))[0]!;
const ctx: FaultContext = {
  containers,
  replicas,
  log,
  outages: [],
  kills: [],
  recovered: [],
  readyTimeoutMs: 90_000,
};
const options = {
  devnet,
  urls: stack.urls,
  usdc: stack.usdc,
  chainId: stack.chainId,
  attesters,
  reviewSchema: summary.seed.schemas.review as Hex,
  agents,
  attestationsPerAttester: Number(env.COMPOSE_TEST_ATTESTATIONS || 80),
  claimsPerAgent: Number(env.COMPOSE_TEST_CLAIMS || 150),
  paidPerAgent: Number(env.COMPOSE_TEST_PAID || 12),
  minPaidPerAgent: MAX_USE + 1,
  // The loops run while the faults do (each bounded by its count and the deadline as well).
  done: () => faultsDone,
  gaps: { attestationMs: 1_500, claimMs: 1_000, paidMs: 8_000 },
  deadline,
  record,
};
let faultsDone = false;
log(
  `workload: ${attesters.length} attesters, ${agents.length} agents, until ${new Date(deadline).toISOString()}`,
);
const workload = runWorkload(options);
// The chain-indexer's cursor, polled while it backfills.
const cursorPool = createPool({ connectionString: databaseUrl, schema: "public", max: 1 });
const indexerCursor = async () =>
  BigInt(
    (await cursorPool.query<{ block_number: string }>("select block_number from chain_indexer.cursor"))
      .rows[0]?.block_number ?? -1,
  );
const faults = (async () => {
  await new Promise((r) => setTimeout(r, 5_000));
  await killOneReplicaEach(ctx);
  await killIndexerDuringBackfill(
    ctx,
    () => writeAttestations({ ...options, attesters: backlogAttesters }, 10, 0),
    {
      cursor: indexerCursor,
      head: () => devnet.client.getBlockNumber({ cacheTime: 0 }),
    },
  );
  await pauseNats(ctx, natsId, 10_000);
  await restartPostgres(ctx, postgresId);
  faultsDone = true;
})();
await Promise.all([workload, faults]);
await cursorPool.end();
log(
  `workload done in ${((Date.now() - started) / 1000).toFixed(0)} s: ${record.attestations.length} attestations, ${record.claims.length} claims, ${record.paid.length} paid requests, ${record.responses.length} responses`,
);

// 3. Settle: outboxes drained, consumers caught up, the API serving what was written (bounded).
await settle(120_000);

// 4. The invariants.
// The compose NATS has one user per service (deploy/k8s/base/nats/users.conf); the checks read as the operator.
const nc = await connect({
  servers: stack.natsUrl,
  name: "compose-test",
  ...stack.natsUser,
});
const agentHuman = new Map(
  summary.seed.pairings.map((p) => [p.recipient.ethereumAddress.toLowerCase(), p.attester.iden3Id]),
);
async function check(): Promise<Verdict[]> {
  const usageNow = await usage();
  const delta = new Map([...usageNow].map(([h, n]) => [h, n - (usageBefore.get(h) ?? 0)]));
  return [
    ...(await attestationsServed(stack!.urls["attestations-api"], record, attesterDids)),
    ...(await payments({
      devnet,
      usdc: stack!.usdc as Address,
      payee: PAYEE,
      fromBlock,
      record,
      agentHuman,
      humanTierPrice: HUMAN_TIER_PRICE,
      maxUse: MAX_USE,
      usage: delta,
    })),
    ...(await events(databaseUrl, nc)),
    serverErrors(record.responses, ctx.outages, ctx.kills),
    recoveries(ctx.recovered, READY_BOUND_S),
  ];
}
verdicts.push(await traces(jaegerUrl), ...(await check()));
out("");
printTable(verdicts, out);
const failed = verdicts.filter((v) => !v.ok).length;

if (env.COMPOSE_TEST_PROVE === "1") await prove();
await nc.close();
process.exit(failed > 0 ? 1 : 0);

async function usage(): Promise<Map<string, number>> {
  const pool = createPool({ connectionString: databaseUrl, schema: "public", max: 1 });
  try {
    const rows = await pool.query<{ human_id: string; count: number }>(
      "select human_id, count from payment_gateway.human_usage",
    );
    return new Map(rows.rows.map((r) => [r.human_id, r.count]));
  } catch {
    return new Map();
  } finally {
    await pool.end();
  }
}

async function settle(timeoutMs: number): Promise<void> {
  const pool = createPool({ connectionString: databaseUrl, schema: "public", max: 1 });
  const until = Date.now() + timeoutMs;
  try {
    while (Date.now() < until) {
      const pending = await pool
        .query<{ n: string }>(
          ["verifier", "chain_indexer", "attestations", "agent_auth", "payment_gateway"]
            .map((s) => `select count(*) as n from "${s}".outbox where published_at is null`)
            .join(" union all "),
        )
        .then((r) => r.rows.reduce((sum, row) => sum + Number(row.n), 0))
        .catch(() => -1);
      if (pending === 0) {
        const verdict = await attestationsServed(stack!.urls["attestations-api"], record, attesterDids).catch(
          () => [],
        );
        if (verdict.length > 0 && verdict.every((v) => v.ok)) return;
      }
      await new Promise((r) => setTimeout(r, 1_000));
    }
    log("settle: not settled in time; checking anyway");
  } finally {
    await pool.end();
  }
}

/** Breaks, in the settled system, what each invariant guards, and shows the check fails. */
async function prove(): Promise<void> {
  // The read model's triggers call functions of its own schema.
  const pool = createPool({ connectionString: databaseUrl, schema: "attestations", max: 1 });
  const breaks: { what: string; invariant: RegExp; apply: () => Promise<unknown> }[] = [
    {
      what: "one indexed attestation deleted from the read model (a gap)",
      invariant: /served once/,
      apply: () =>
        pool.query("delete from attestations.attestations where id = $1", [
          record.attestations.find((a) => !a.revoked)!.id.toLowerCase(),
        ]),
    },
    {
      what: "one revocation undone in the read model",
      invariant: /revocations applied/,
      apply: () =>
        pool.query("update attestations.attestations set revoked = false where id = $1", [
          record.attestations.find((a) => a.revoked)!.id.toLowerCase(),
        ]),
    },
    {
      what: "a human's usage counted once more than it was used",
      invariant: /per-human usage/,
      apply: () =>
        pool.query(
          "update payment_gateway.human_usage set count = count + 1 where ctid = (select ctid from payment_gateway.human_usage limit 1)",
        ),
    },
    {
      what: "a settlement with no 200 (a transfer to the payee outside the gateway)",
      invariant: /settled without a 200/,
      apply: async () => {
        const { writeContract } = devnet.client;
        const hash = await writeContract({
          address: stack!.usdc as Address,
          abi: ABIs.usdc,
          functionName: "transfer",
          args: [PAYEE, 1_000n],
          account: summary!.accounts[5]!.address,
        } as never);
        await devnet.client.waitForTransactionReceipt({ hash });
      },
    },
    {
      what: "a published event deleted from its stream (JetStream lost it)",
      invariant: /published exactly once/,
      apply: async () => {
        const jsm = await jetstreamManager(nc);
        const { state } = await jsm.streams.info("AGENT_AUTH");
        await jsm.streams.deleteMessage("AGENT_AUTH", state.last_seq);
      },
    },
    {
      what: "a consumer without its inbox (one consumer's inbox rows deleted)",
      invariant: /applied once/,
      apply: () =>
        pool.query(
          "delete from attestations.inbox where consumer = (select min(consumer) from attestations.inbox)",
        ),
    },
  ];
  out("");
  out("Each invariant, broken on purpose:");
  try {
    for (const b of breaks) {
      await b.apply();
      const verdict = (await check()).find((v) => b.invariant.test(v.invariant))!;
      out(
        `  ${verdict.ok ? "NOT DETECTED" : "detected    "}  ${b.what} → ${verdict.invariant}: ${verdict.detail}`,
      );
    }
    // Last: the other checks read through Postgres. A request while it is down, outside every declared outage.
    await docker("stop", "-t", "10", postgresId);
    try {
      await recordingFetch(
        stack!.urls,
        record.responses,
      )(
        `${stack!.urls["attestations-api"]}/api/v1/attestations?attesterDid=${encodeURIComponent(attesterDids[0]!)}`,
      ).catch(() => undefined);
    } finally {
      await docker("start", postgresId);
    }
    const undeclared = serverErrors(record.responses, ctx.outages, ctx.kills);
    out(
      `  ${undeclared.ok ? "NOT DETECTED" : "detected    "}  Postgres stopped with no outage declared, one API request meanwhile → ${undeclared.invariant}: ${undeclared.detail}`,
    );
    const strict = recoveries(ctx.recovered, 0.5);
    out(
      `  ${strict.ok ? "NOT DETECTED" : "detected    "}  a 0.5 s bound → ${strict.invariant}: ${strict.detail}`,
    );
  } finally {
    await pool.end();
  }
}
