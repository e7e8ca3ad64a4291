// What the two compose fault suites share (faults.compose.test.ts on one NATS server, nats-cluster.compose.test.ts
// on three), so that each test file holds its faults alone: the hold on the stack, a workload started before the
// faults and awaited after them, each fault survived within a readiness bound, and once the system has settled one
// test per invariant over what the workload did. The functions that register hooks and tests do so in the
// describe block they are called from.

import { type DevnetAccount, identityFromAddress } from "@humanpass/devnet";
import { sleep } from "@humanpass/retry";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import type { Address, Hex } from "viem";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type DuringFault, type Fault, type Recovery, underFault } from "./faults.ts";
import { type Harness, humanUsage, openHarness, settle } from "./harness.ts";
import {
  attestationsServed,
  type DeclaredResponse,
  events,
  INVARIANTS,
  type Invariant,
  payments,
  recoveries,
  serverErrors,
  type Verdict,
} from "./invariants.ts";
import { traces } from "./traces.ts";
import { runWorkload, type WorkloadOptions } from "./workload.ts";

/** The paid route's quota per human (the stack's MAX_USE) and its human-tier price. */
const MAX_USE = 5;
const HUMAN_TIER_PRICE = 1_000n;

export interface FaultSuiteOptions {
  /** Seconds from a fault's start until every replica of every service must answer /readyz 200 again. */
  readyBoundS: number;
  /**
   * The workload's defaults: writes per attester, claims and paid requests per agent (COMPOSE_TEST_ATTESTATIONS,
   * COMPOSE_TEST_CLAIMS, COMPOSE_TEST_PAID override them), the pauses of its loops, and the seconds it may run at
   * most (COMPOSE_TEST_WORKLOAD_S).
   */
  workload: {
    attestations: number;
    claims: number;
    paid: number;
    gaps: NonNullable<WorkloadOptions["gaps"]>;
    seconds: number;
  };
  /** The servers the suite's own NATS connection (the operator) is given; default the stack's published port. */
  natsServers?: () => Promise<string[]>;
  /** The invariants checked once the system has settled; default all of them. */
  invariants?: Invariant[];
}

export interface FaultSuite {
  h: Harness;
  invariants: Invariant[];
  workload: WorkloadOptions;
  /** The paid route's payee, whose USDC transfers the payments invariant reads. */
  payee: Address;
  /** Accounts of their own for backlogs written during a fault, so that no two loops share a nonce sequence. */
  backlogAttesters: DevnetAccount[];
  attesterDids: string[];
  /** The 5xx answers the suite provokes on purpose, with the status the spec gives them. */
  declared: DeclaredResponse[];
  recovered: Recovery[];
  /** The operator's connection to NATS (opened on first use, closed after the suite). */
  nats(): Promise<NatsConnection>;
  /** Starts the workload; it runs until the faults are done and its loops have done their counts. */
  startWorkload(): Promise<void>;
  /** Runs a fault (with what must hold while it lasts) and expects every service ready again within the bound. */
  survives(fault: Fault, during?: DuringFault[]): Promise<Recovery>;
  /** Every invariant's verdict over what the workload did, against the system as it is now. */
  check(): Promise<Verdict[]>;
  /** Ends the workload once its loops have done their counts; logs what it did and each fault's recovery. */
  finishWorkload(): Promise<void>;
}

export async function openFaultSuite(options: FaultSuiteOptions): Promise<FaultSuite> {
  const env = process.env;
  const h = await openHarness();
  const payee = h.summary.accounts[9]!.address as Address;
  const attesters = h.summary.accounts.slice(11, 13) as DevnetAccount[];
  const backlogAttesters = h.summary.accounts.slice(13, 15) as DevnetAccount[];
  const attesterDids = [...attesters, ...backlogAttesters].map((a) => identityFromAddress(a.address).did);
  const agentHuman = new Map(
    h.summary.seed.pairings.map((p) => [p.recipient.ethereumAddress.toLowerCase(), p.attester.iden3Id]),
  );
  const declared: DeclaredResponse[] = [];
  const recovered: Recovery[] = [];
  let faultsDone = false;
  let running: Promise<void> | undefined;
  let usageBefore = new Map<string, number>();
  let fromBlock = 0n;
  let nc: Promise<NatsConnection> | undefined;
  const invariants = options.invariants ?? (Object.keys(INVARIANTS) as Invariant[]);
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
    attestationsPerAttester: Number(env.COMPOSE_TEST_ATTESTATIONS || options.workload.attestations),
    claimsPerAgent: Number(env.COMPOSE_TEST_CLAIMS || options.workload.claims),
    paidPerAgent: Number(env.COMPOSE_TEST_PAID || options.workload.paid),
    minPaidPerAgent: MAX_USE + 1,
    // The loops run while the faults do (each bounded by its count and the deadline as well).
    done: () => faultsDone,
    gaps: options.workload.gaps,
    // Set once the workload starts.
    deadline: 0,
    record: h.record,
  };

  const nats = () => {
    nc ??= (async () =>
      connect({
        servers: options.natsServers ? await options.natsServers() : h.stack.natsUrl,
        name: "compose-test",
        // The compose NATS has one user per service (deploy/k8s/base/nats/users.conf); the checks read as the operator.
        ...h.stack.natsUser,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 250,
        // A paused server answers no ping: this client moves to another (in a cluster) within seconds, not minutes.
        pingInterval: 2_000,
        maxPingOut: 2,
      }))();
    return nc;
  };

  afterAll(async () => {
    await (await nc)?.close();
    await h.pool.end();
  });

  return {
    h,
    invariants,
    payee,
    workload,
    backlogAttesters,
    attesterDids,
    declared,
    recovered,
    nats,
    async startWorkload() {
      usageBefore = await humanUsage(h);
      fromBlock = (await h.devnet.client.getBlockNumber()) + 1n;
      // The loops end by their counts; the deadline only bounds them (faults that wait for an alert outlast their
      // own duration, and the backlogs written later need it not passed).
      workload.deadline = Date.now() + Number(env.COMPOSE_TEST_WORKLOAD_S || options.workload.seconds) * 1000;
      h.log(
        `workload: ${attesters.length} attesters, ${workload.agents.length} agents, until ${new Date(workload.deadline).toISOString()}`,
      );
      running = runWorkload(workload);
      // Awaited once the faults are over; a failure before that is reported there, not as an unhandled rejection.
      running.catch(() => {});
      await sleep(5_000);
    },
    async survives(fault, during = []) {
      const recovery = await underFault(h.faults, fault, during);
      recovered.push(recovery);
      const verdict = recoveries([recovery], options.readyBoundS);
      expect(verdict.ok, `${verdict.invariant}: ${verdict.detail}`).toBe(true);
      return recovery;
    },
    async check() {
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
        ...(await events(h.databaseUrl, await nats())),
        serverErrors(h.record.responses, h.faults.outages, h.faults.kills, declared),
        ...(invariants.includes("traces") ? [await traces(h.jaegerUrl)] : []),
      ];
    },
    async finishWorkload() {
      faultsDone = true;
      await running;
      const { record } = h;
      h.log(
        `workload done: ${record.attestations.length} attestations, ${record.claims.length} claims, ${record.paid.length} paid requests, ${record.responses.length} responses`,
      );
      h.log(`recovery: ${recoveries(recovered, options.readyBoundS).detail}`);
    },
  };
}

/**
 * Registers, in the calling describe: once the faults are done, the workload awaited and the system settled, one
 * test per invariant of the suite, each printing its figures. Returns the verdict of an invariant as last
 * checked, and a way to check them all again (after breaking one on purpose).
 */
export function invariantTests(s: FaultSuite): {
  verdict(invariant: Invariant): Verdict | undefined;
  recheck(): Promise<void>;
} {
  let verdicts: Verdict[] = [];
  const recheck = async () => {
    verdicts = await s.check();
  };
  beforeAll(async () => {
    await s.finishWorkload();
    const from = Date.now();
    const settled = await settle(s.h, await s.nats(), s.attesterDids, 120_000);
    s.h.log(
      settled
        ? `settled ${((Date.now() - from) / 1000).toFixed(1)} s after the workload (outboxes drained, consumers caught up)`
        : "settle: not settled in time; checking anyway",
    );
    await recheck();
  }, 600_000);
  const verdict = (invariant: Invariant) => verdicts.find((v) => v.invariant === INVARIANTS[invariant]);
  it.each(s.invariants.map((invariant) => [invariant, INVARIANTS[invariant]]))("%s: %s", (invariant) => {
    const v = verdict(invariant as Invariant);
    if (!v) throw new Error(`no verdict for ${invariant}`);
    s.h.log(`${v.ok ? "holds" : "FAILS"}: ${v.invariant}: ${v.detail}`);
    expect(v.ok, v.detail).toBe(true);
  });
  return { verdict, recheck };
}
