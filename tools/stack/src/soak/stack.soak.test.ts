// make test-soak (vitest --project soak; .ci/run runs it after make test): the driver of `npm run bench -- soak`
// for SOAK_MINUTES (default 3, warm-up SOAK_WARMUP_MINUTES 1) on a stack of its own. It asserts only what a leak
// breaks whatever the machine's speed: the exact counts once the system settled, pools within their max and
// released at rest, open file descriptors and timers not climbing. Growth and latency are the benchmark's to judge.
import { testDatabaseUrl, testNatsUrl } from "@humanpass/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { LEAK_CHECKS } from "./analysis.ts";
import { checked, formatReport } from "./report.ts";
import { ratesFromEnv, runSoak, type SoakResult } from "./run.ts";

const env = process.env;
const minutes = Number(env.SOAK_MINUTES ?? 3);
let result: SoakResult;

const log = (line: string) => process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);

beforeAll(async () => {
  result = await runSoak({
    databaseUrl: testDatabaseUrl(),
    natsUrl: testNatsUrl(),
    minutes,
    warmupMinutes: Number(env.SOAK_WARMUP_MINUTES ?? 1),
    sampleSeconds: Number(env.SOAK_SAMPLE_S ?? 10),
    rates: ratesFromEnv(env),
    log,
    serviceLog: (service, line) => log(`${service} | ${line}`),
  });
  // The figures in the log, for whoever reads a failure (or a pass) in CI.
  log(`\n${formatReport(result, checked(result))}`);
});

/** Every verdict named `…: <check>` holds; the message lists those that do not. */
function allHold(check: string) {
  const verdicts = checked(result).filter((v) => v.invariant.endsWith(`: ${check}`));
  const failing = verdicts.filter((v) => !v.ok).map((v) => `${v.invariant}: ${v.detail}`);
  expect(verdicts.length, `no verdict for "${check}"`).toBeGreaterThan(0);
  expect(failing, failing.join("\n")).toEqual([]);
}

describe(`a ${minutes}-minute soak of the stack at a fixed mixed load`, () => {
  it("settles: every outbox drained and every durable consumer caught up once the load stops", () => {
    expect(result.settled).toBe(true);
  });

  it("keeps the exact counts: outbox = stream, inbox = applied, payments = transfers, no unexpected response", () => {
    const failing = result.invariants.filter((v) => !v.ok).map((v) => `${v.invariant}: ${v.detail}`);
    expect(result.invariants.length).toBeGreaterThan(0);
    expect(failing, failing.join("\n")).toEqual([]);
  });

  it("never opens more pool connections than the pool's max", () => allHold(LEAK_CHECKS.poolMax));

  it("releases every pool connection once the load stops", () => allHold(LEAK_CHECKS.poolAtRest));

  it("holds no more file descriptors at the end, or at rest, than after the warm-up (within a slack)", () =>
    allHold(LEAK_CHECKS.fds));

  it("keeps no more timers at the end, or at rest, than after the warm-up (within a slack)", () =>
    allHold(LEAK_CHECKS.timers));
});
