import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  ANY_PROOF_AGE_MS,
  FIXTURE_CONTEXTS_DIR,
  stable,
  tokensWithInvalidAuthProof,
} from "../../test/support/fixtures.ts";
import { testEngine } from "../../test/support/settings.ts";
import type { ResolvedState } from "./token-verifier.ts";
import { createVerificationPool, type VerificationPool } from "./verification-pool.ts";

let rpcDown = false;
const calls: string[] = [];
const answer = async (method: string): Promise<ResolvedState> => {
  calls.push(method);
  if (rpcDown) throw new Error("rpc unreachable");
  return { latest: true, genesis: false, state: null, transitionTimestamp: 0 };
};
let pool: VerificationPool;
const readyWorkers: number[] = [];
let readyWhenPoolReady: number[] = [];
let gatewayUp = true;
const fetched: string[] = [];
/** Stands in for the IPFS gateway / https fetch: serves the fixture contexts by their file name. */
const fetchRemoteDocument = async (url: string) => {
  fetched.push(url);
  if (!gatewayUp) throw new Error("gateway unreachable");
  return JSON.parse(await readFile(join(FIXTURE_CONTEXTS_DIR, url.split("/").pop() as string), "utf8"));
};

beforeAll(async () => {
  pool = createVerificationPool({
    size: 2,
    stateResolvers: {
      [stable.network]: { resolve: () => answer("resolve"), rootResolve: () => answer("rootResolve") },
    },
    localContextDirs: [],
    fetchRemoteDocument,
    proofMaxAgeMs: ANY_PROOF_AGE_MS,
    engine: testEngine,
    onWorkerReady: (index) => readyWorkers.push(index),
  });
  await pool.ready();
  readyWhenPoolReady = [...readyWorkers];
});

afterAll(async () => {
  await pool?.close();
});

describe("verification worker pool", () => {
  it("is ready once its first worker can verify; the second starts loading behind it and takes jobs once ready", async () => {
    expect(readyWhenPoolReady).toEqual([0]);
    const outcome = await pool.verify(stable.token, stable.request, stable.sessionId);
    expect(outcome.kind).toBe("verified");
    await vi.waitFor(() => expect(readyWorkers).toEqual([0, 1]), { timeout: 60_000, interval: 100 });
  });

  it("verifies concurrently in its threads, resolving state through the main thread", async () => {
    const outcomes = await Promise.all(
      Array.from({ length: 4 }, () => pool.verify(stable.token, stable.request, stable.sessionId)),
    );
    expect(outcomes.map((o) => o.kind === "verified" && o.proof.nullifier)).toEqual(
      Array(4).fill(stable.nullifier),
    );
    expect(calls).toContain("rootResolve");
    expect(calls).toContain("resolve");
    // The request's context was fetched once for both threads, not once per verification.
    expect(fetched).toEqual([stable.request.body.scope[0].query.context]);
  });

  it("keeps verifying from its cache when the gateway goes down after the first load", async () => {
    gatewayUp = false;
    try {
      const outcomes = await Promise.all(
        [1, 2].map(() => pool.verify(stable.token, stable.request, stable.sessionId)),
      );
      expect(outcomes.map((o) => o.kind)).toEqual(["verified", "verified"]);
    } finally {
      gatewayUp = true;
    }
  });

  it("passes a state resolution failure back as the verification error", async () => {
    rpcDown = true;
    try {
      await expect(pool.verify(stable.token, stable.request, stable.sessionId)).rejects.toThrow(
        /rpc unreachable/,
      );
    } finally {
      rpcDown = false;
    }
  });

  it("refuses each queued token with an invalid proof and verifies the valid ones queued with them", async () => {
    const invalid = tokensWithInvalidAuthProof();
    const tokens = [...invalid.flatMap(({ token }) => [stable.token, token]), stable.token, stable.token];
    const outcomes = await Promise.allSettled(
      tokens.map((token) => pool.verify(token, stable.request, stable.sessionId)),
    );
    outcomes.forEach((outcome, i) => {
      const bad = invalid.find(({ token }) => token === tokens[i]);
      if (bad) expect(outcome.status, bad.kind).toBe("rejected");
      else
        expect(outcome.status === "fulfilled" && outcome.value).toMatchObject({
          kind: "verified",
          proof: { nullifier: stable.nullifier },
        });
    });
  });

  it("runs its threads at the default nice value 10 once they are ready, the event loop's thread at 0", async () => {
    const tasks = await readdir("/proc/self/task");
    // The nice value is the 19th field of /proc/<pid>/task/<tid>/stat, the 17th after the command's ")".
    const nice = await Promise.all(
      tasks.map(async (tid) => {
        const stat = await readFile(`/proc/self/task/${tid}/stat`, "utf8");
        return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]);
      }),
    );
    expect(nice.filter((n) => n === 10)).toHaveLength(2);
    expect(nice[tasks.indexOf(String(process.pid))]).toBe(0);
  });

  it("refuses the jobs beyond its queue bound while its worker is full, and verifies the others", async () => {
    const bounded = createVerificationPool({
      size: 1,
      stateResolvers: {
        [stable.network]: { resolve: () => answer("resolve"), rootResolve: () => answer("rootResolve") },
      },
      localContextDirs: [FIXTURE_CONTEXTS_DIR],
      proofMaxAgeMs: ANY_PROOF_AGE_MS,
      engine: "single", // two jobs in its worker at once
      maxQueued: 1,
    });
    try {
      await bounded.ready();
      const outcomes = await Promise.allSettled(
        [1, 2, 3, 4].map(() => bounded.verify(stable.token, stable.request, stable.sessionId)),
      );
      expect(outcomes.map((o) => (o.status === "fulfilled" ? o.value.kind : String(o.reason)))).toEqual([
        "verified",
        "verified",
        "verified",
        "Error: verifier is overloaded, try again later",
      ]);
    } finally {
      await bounded.close();
    }
  });

  it("refuses work once closed", async () => {
    const closing = createVerificationPool({ size: 1, stateResolvers: {}, localContextDirs: [] });
    await closing.close();
    await expect(closing.verify(stable.token, stable.request, stable.sessionId)).rejects.toThrow(/closed/);
  });
});
