/**
 * The periodic-job mechanism every service's purges run on, against real Postgres: a round is bounded statements
 * until one deletes less than a batch, a failed round leaves the next ones running, and stop() ends the waits and
 * awaits the round under way.
 */

import { createPool, type Pool } from "@humanpass/db";
import { createMetrics, type ServiceMetrics } from "@humanpass/telemetry";
import { createTestDatabase, eventually, sampleValue, type TestDatabase } from "@humanpass/testing";
import pino from "pino";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type PeriodicJob, startPeriodicJobs } from "../src/periodic-jobs.ts";

const HOUR_MS = 3_600_000;
let database: TestDatabase;
let pool: Pool;
let metrics: ServiceMetrics;

beforeAll(async () => {
  database = await createTestDatabase("service_jobs");
  pool = createPool({ connectionString: database.url, schema: "public", max: 4 });
  await pool.query("create table expiring (id serial primary key, expires_at timestamptz not null)");
  metrics = createMetrics({ serviceName: "periodic-jobs-test" });
});

afterAll(async () => {
  await metrics.shutdown();
  await pool.end();
  await database.drop();
});

beforeEach(async () => {
  await pool.query("truncate expiring");
  // 23 expired, 5 not.
  await pool.query(`
    insert into expiring (expires_at)
    select now() - interval '1 hour' from generate_series(1, 23)
    union all select now() + interval '1 hour' from generate_series(1, 5)`);
});

const rowsLeft = async () => Number((await pool.query("select count(*) as n from expiring")).rows[0].n);

/** The bounded statement of the brief's style; each call's deleted count is pushed to `calls`. */
function expiringJob(calls: number[], counter = "humanpass_test_purged_rows_total"): PeriodicJob {
  return {
    name: "expiring",
    counter: { name: counter, description: "test rows deleted" },
    batchSize: 10,
    async deleteBatch(limit) {
      const { rowCount } = await pool.query(
        "delete from expiring where ctid = any(array(select ctid from expiring where expires_at < now() limit $1 for update skip locked))",
        [limit],
      );
      calls.push(rowCount ?? 0);
      return rowCount ?? 0;
    },
  };
}

function capturingLogger() {
  const lines: Array<{ level: number; msg: string; job?: string; err?: string }> = [];
  const logger = pino({ level: "debug" }, {
    write: (line: string) => void lines.push(JSON.parse(line)),
  } as unknown as pino.DestinationStream);
  return { logger, lines };
}

describe("startPeriodicJobs", () => {
  it("runs a job at once, in bounded statements until one deletes less than a batch, and counts the rows", async () => {
    const calls: number[] = [];
    const { logger } = capturingLogger();
    const jobs = startPeriodicJobs([expiringJob(calls)], {
      intervalMs: HOUR_MS,
      logger,
      meter: metrics.meter,
    });
    try {
      await eventually(() => calls.length === 3);
    } finally {
      await jobs.stop();
    }
    expect(calls).toEqual([10, 10, 3]);
    expect(await rowsLeft()).toBe(5);
    expect(sampleValue(await metrics.render(), "humanpass_test_purged_rows_total")).toBe(23);
  });

  it("logs a failed round and runs the next one", async () => {
    const calls: number[] = [];
    const { logger, lines } = capturingLogger();
    const job = expiringJob(calls, "humanpass_test_failing_purged_rows_total");
    let failed = false;
    const flaky: PeriodicJob = {
      ...job,
      async deleteBatch(limit) {
        if (!failed) {
          failed = true;
          throw new Error("database went away");
        }
        return job.deleteBatch(limit);
      },
    };
    const jobs = startPeriodicJobs([flaky], { intervalMs: 10, logger, meter: metrics.meter });
    try {
      await eventually(async () => (await rowsLeft()) === 5);
    } finally {
      await jobs.stop();
    }
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 40,
        job: "expiring",
        err: "database went away",
        msg: "purge failed; retrying at the next interval",
      }),
    );
  });

  it("skips a round whose job says nothing may be deleted", async () => {
    let asked = 0;
    const { logger } = capturingLogger();
    const jobs = startPeriodicJobs(
      [
        {
          name: "kept",
          counter: { name: "humanpass_test_kept_purged_rows_total", description: "none" },
          deleteBatch: async () => {
            asked++;
            return undefined;
          },
        },
      ],
      { intervalMs: 10, logger, meter: metrics.meter },
    );
    try {
      await eventually(() => asked >= 3);
    } finally {
      await jobs.stop();
    }
    expect(sampleValue(await metrics.render(), "humanpass_test_kept_purged_rows_total")).toBe(0);
  });

  it("stop() ends the wait between rounds and awaits the statement under way; no round starts after it", async () => {
    const { logger } = capturingLogger();
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started = 0;
    let finished = 0;
    const jobs = startPeriodicJobs(
      [
        {
          name: "slow",
          counter: { name: "humanpass_test_slow_purged_rows_total", description: "none" },
          async deleteBatch() {
            started++;
            await gate;
            finished++;
            return 0;
          },
        },
        // Waiting out an hour-long interval when stopped would hold stop() past the test's timeout.
        expiringJob([], "humanpass_test_idle_purged_rows_total"),
      ],
      { intervalMs: HOUR_MS, logger, meter: metrics.meter },
    );
    await eventually(() => started === 1);
    let stopped = false;
    const stopping = jobs.stop().then(() => {
      stopped = true;
    });
    await Promise.resolve();
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect({ started, finished }).toEqual({ started: 1, finished: 1 });
  });
});
