// make test-compose (vitest.compose.config.ts), once scripts/compose/test.sh has the stack up with 2 replicas of
// every service: `make demo` against it, then one test per fault while a bounded workload runs, then one test per
// invariant once the system has settled. COMPOSE_TEST_PROVE=1 adds tests that break, in the settled system, what
// each invariant guards and expect its check to fail.
// To check something while a fault lasts (an alert firing, a metric moving), pass it to `underFault` in that
// fault's test: it runs between the fault's start and its end, and the fault lasts until it is done.
import { execFile } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { createPool } from "@humanpass/db";
import { ABIs, type DevnetAccount, identityFromAddress } from "@humanpass/devnet";
import { jetstreamManager } from "@humanpass/event-bus";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import type { Address, Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../processes";
import { docker } from "./docker";
import {
  type DuringFault,
  type Fault,
  indexerKilledDuringBackfill,
  natsPaused,
  postgresRestarted,
  type Recovery,
  replicaKilled,
  SERVICES,
  underFault,
} from "./faults";
import { type Harness, humanUsage, indexerCursor, openHarness, settle } from "./harness";
import {
  attestationsServed,
  events,
  INVARIANTS,
  type Invariant,
  payments,
  recoveries,
  serverErrors,
  type Verdict,
} from "./invariants";
import { traces } from "./traces";
import { recordingFetch, runWorkload, type WorkloadOptions, writeAttestations } from "./workload";

const env = process.env;
/** Seconds from a fault's start until every replica of every service answers /readyz 200 again. */
const READY_BOUND_S = 30;
const MAX_USE = 5;
const HUMAN_TIER_PRICE = 1_000n;

const h: Harness = await openHarness();
const payee = h.summary.accounts[9]!.address as Address;
const attesters = h.summary.accounts.slice(11, 13) as DevnetAccount[];
// The backlog written while the indexers are down has its own senders, so no two loops share a nonce sequence.
const backlogAttesters = h.summary.accounts.slice(13, 15) as DevnetAccount[];
const attesterDids = [...attesters, ...backlogAttesters].map((a) => identityFromAddress(a.address).did);
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
  attestationsPerAttester: Number(env.COMPOSE_TEST_ATTESTATIONS || 80),
  claimsPerAgent: Number(env.COMPOSE_TEST_CLAIMS || 150),
  paidPerAgent: Number(env.COMPOSE_TEST_PAID || 12),
  minPaidPerAgent: MAX_USE + 1,
  // The loops run while the faults do (each bounded by its count and the deadline as well).
  done: () => faultsDone,
  gaps: { attestationMs: 1_500, claimMs: 1_000, paidMs: 8_000 },
  // Set once the workload starts.
  deadline: 0,
  record: h.record,
};

/** Runs a fault (with what must hold while it lasts) and expects every service ready again within the bound. */
async function survives(fault: Fault, during: DuringFault[] = []): Promise<void> {
  const recovery = await underFault(h.faults, fault, during);
  recovered.push(recovery);
  const verdict = recoveries([recovery], READY_BOUND_S);
  expect(verdict.ok, `${verdict.invariant}: ${verdict.detail}`).toBe(true);
}

/** Prints the verdict's figures, then expects it to hold. */
function holds(verdict: Verdict | undefined): void {
  if (!verdict) throw new Error("no verdict");
  h.log(`${verdict.ok ? "holds" : "FAILS"}: ${verdict.invariant}: ${verdict.detail}`);
  expect(verdict.ok, verdict.detail).toBe(true);
}

afterAll(async () => {
  await h.pool.end();
});

describe.sequential("the stack in containers, 2 replicas of every service", () => {
  it("serves make demo: the human tier until max_use_exceeded, then the standard tier", async () => {
    const { stdout: output } = await promisify(execFile)("make", ["-s", "demo"], {
      cwd: REPO_ROOT,
      env: { ...env },
      timeout: 180_000,
    });
    h.log(
      `demo: ${output.match(/#\d+: \d+/g)?.join(", ") ?? "no payments"}; ${(output.match(/\[event\]/g) ?? []).length} events printed`,
    );
    expect(output).toMatch(/discounted \(human\) tier/);
    expect(output).toMatch(/standard tier/);
  });

  describe(`with a workload running, every replica of every service back on /readyz within ${READY_BOUND_S} s of`, () => {
    let running: Promise<void>;
    let usageBefore: Map<string, number>;
    let fromBlock: bigint;

    beforeAll(async () => {
      usageBefore = await humanUsage(h);
      fromBlock = (await h.devnet.client.getBlockNumber()) + 1n;
      workload.deadline = Date.now() + Number(env.COMPOSE_TEST_WORKLOAD_S || 240) * 1000;
      h.log(
        `workload: ${attesters.length} attesters, ${workload.agents.length} agents, until ${new Date(workload.deadline).toISOString()}`,
      );
      running = runWorkload(workload);
      // Awaited once the faults are over; a failure before that is reported there, not as an unhandled rejection.
      running.catch(() => {});
      await sleep(5_000);
    });

    it.each(SERVICES)("a docker kill of one %s replica", async (service) => {
      await survives(replicaKilled(h.faults, service));
    });

    it("a kill of the chain-indexer during its backfill", async () => {
      await survives(
        indexerKilledDuringBackfill(
          h.faults,
          () => writeAttestations({ ...workload, attesters: backlogAttesters }, 10, 0),
          { cursor: () => indexerCursor(h), head: () => h.devnet.client.getBlockNumber({ cacheTime: 0 }) },
        ),
      );
    });

    it("NATS paused for 10 s", async () => {
      await survives(natsPaused(h.faults, 10_000));
    });

    it("a Postgres restart", async () => {
      await survives(postgresRestarted(h.faults));
    });

    describe("once the workload is done and the system has settled", () => {
      let nc: NatsConnection;
      let verdicts: Verdict[];

      /** Every invariant's verdict over what the workload did, against the system as it is now. */
      async function check(): Promise<Verdict[]> {
        const usageNow = await humanUsage(h);
        const usage = new Map([...usageNow].map(([human, n]) => [human, n - (usageBefore.get(human) ?? 0)]));
        return [
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
          await traces(h.jaegerUrl),
        ];
      }
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
        // The compose NATS has one user per service (deploy/k8s/base/nats/users.conf); the checks read as the operator.
        nc = await connect({ servers: h.stack.natsUrl, name: "compose-test", ...h.stack.natsUser });
        verdicts = await check();
      }, 600_000);

      afterAll(async () => {
        await nc?.close();
      });

      it.each(Object.entries(INVARIANTS))("%s: %s", (invariant) => {
        holds(verdict(invariant as Invariant));
      });

      if (env.COMPOSE_TEST_PROVE === "1") {
        describe("each invariant, broken on purpose, fails its check", () => {
          // The read model's triggers call functions of its own schema.
          const pool = createPool({ connectionString: h.databaseUrl, schema: "attestations", max: 1 });
          afterAll(() => pool.end());
          const breaks: { what: string; invariant: Invariant; apply(): Promise<unknown> }[] = [
            {
              what: "one indexed attestation deleted from the read model (a gap)",
              invariant: "served",
              apply: () =>
                pool.query("delete from attestations.attestations where id = $1", [
                  h.record.attestations.find((a) => !a.revoked)!.id.toLowerCase(),
                ]),
            },
            {
              what: "one revocation undone in the read model",
              invariant: "revocations",
              apply: () =>
                pool.query("update attestations.attestations set revoked = false where id = $1", [
                  h.record.attestations.find((a) => a.revoked)!.id.toLowerCase(),
                ]),
            },
            {
              what: "a human's usage counted once more than it was used",
              invariant: "usage",
              apply: () =>
                pool.query(
                  "update payment_gateway.human_usage set count = count + 1 where ctid = (select ctid from payment_gateway.human_usage limit 1)",
                ),
            },
            {
              what: "a settlement with no 200 (a transfer to the payee outside the gateway)",
              invariant: "noOrphanSettlement",
              apply: async () => {
                const hash = await h.devnet.client.writeContract({
                  address: h.stack.usdc as Address,
                  abi: ABIs.usdc,
                  functionName: "transfer",
                  args: [payee, 1_000n],
                  account: h.summary.accounts[5]!.address,
                } as never);
                await h.devnet.client.waitForTransactionReceipt({ hash });
              },
            },
            {
              what: "a published event deleted from its stream (JetStream lost it)",
              invariant: "publishedOnce",
              apply: async () => {
                const jsm = await jetstreamManager(nc);
                const { state } = await jsm.streams.info("AGENT_AUTH");
                await jsm.streams.deleteMessage("AGENT_AUTH", state.last_seq);
              },
            },
            {
              what: "a consumer without its inbox (one consumer's inbox rows deleted)",
              invariant: "appliedOnce",
              apply: () =>
                pool.query(
                  "delete from attestations.inbox where consumer = (select min(consumer) from attestations.inbox)",
                ),
            },
          ];

          it.each(breaks)("$invariant: $what", async ({ invariant, apply }) => {
            await apply();
            verdicts = await check();
            expect(verdict(invariant)?.ok).toBe(false);
          });

          it("serverErrors: a request while Postgres is stopped, with no outage declared", async () => {
            const postgres = docker.getContainer((await h.faults.containers("postgres"))[0]!);
            await postgres.stop({ t: 10 });
            try {
              const url = `${h.stack.urls["attestations-api"]}/api/v1/attestations?attesterDid=${encodeURIComponent(attesterDids[0]!)}`;
              await recordingFetch(h.stack.urls, h.record.responses)(url).catch(() => undefined);
            } finally {
              await postgres.start();
            }
            expect(serverErrors(h.record.responses, h.faults.outages, h.faults.kills).ok).toBe(false);
          });

          it("recoveries: a 0.5 s bound", () => {
            expect(recoveries(recovered, 0.5).ok).toBe(false);
          });
        });
      }
    });
  });
});
