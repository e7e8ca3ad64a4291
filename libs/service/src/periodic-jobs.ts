import type { Kysely } from "@humanpass/db";
import { inboxRetentionMs, type JetStreamManager, purgeInbox, purgeOutbox } from "@humanpass/event-bus";
import { sleep } from "@humanpass/retry";
import type { Counter, Logger, Meter } from "@humanpass/telemetry";

/**
 * A purge run every interval, off the request path: each round is one bounded statement after another, while a
 * statement deletes a full batch.
 */
export interface PeriodicJob {
  /** In logs. */
  name: string;
  /** The counter the deleted rows are added to; jobs may share one. */
  counter: { name: string; description: string };
  /**
   * One bounded statement: deletes at most `limit` rows (FOR UPDATE SKIP LOCKED, so replicas running it at once
   * neither wait on each other nor delete a row twice) and returns how many, or undefined when nothing may be
   * deleted this round.
   */
  deleteBatch(limit: number): Promise<number | undefined>;
  /** Default: the service's PURGE_INTERVAL_MS. */
  intervalMs?: number;
  /** Default 5,000. */
  batchSize?: number;
}

export interface RunningJobs {
  /** Ends the waits and returns once every round under way has finished. */
  stop(): Promise<void>;
}

/**
 * Runs each job at once and then every interval; a failed round is logged and the job tries again at the next one.
 */
export function startPeriodicJobs(
  jobs: PeriodicJob[],
  options: { intervalMs: number; logger: Logger; meter: Meter },
): RunningJobs {
  const stopping = new AbortController();
  const counters = new Map<string, Counter>();
  const counterOf = ({ name, description }: PeriodicJob["counter"]) => {
    let counter = counters.get(name);
    if (!counter) {
      counter = options.meter.createCounter(name, { description });
      counter.add(0);
      counters.set(name, counter);
    }
    return counter;
  };
  const loops = jobs.map(async (job) => {
    const counter = counterOf(job.counter);
    const batchSize = job.batchSize ?? 5_000;
    while (!stopping.signal.aborted) {
      try {
        let total = 0;
        // Several tables in one statement may together delete more than one batch: that is a full round too.
        for (let n = batchSize; n >= batchSize && !stopping.signal.aborted; ) {
          n = (await job.deleteBatch(batchSize)) ?? 0;
          total += n;
          if (n > 0) counter.add(n);
        }
        if (total > 0) options.logger.debug({ job: job.name, deleted: total }, "expired rows purged");
      } catch (e) {
        options.logger.warn(
          { job: job.name, err: (e as Error).message },
          "purge failed; retrying at the next interval",
        );
      }
      await sleep(job.intervalMs ?? options.intervalMs, stopping.signal);
    }
  });
  return {
    async stop() {
      stopping.abort();
      await Promise.all(loops);
    },
  };
}

/** Published outbox rows older than `retainMs` (OUTBOX_RETENTION_MS); unpublished rows never go. */
export function outboxPurgeJob(db: Kysely<any>, retainMs: number): PeriodicJob {
  return {
    name: "outbox",
    counter: {
      name: "humanpass_outbox_purged_rows_total",
      description: "Published outbox rows deleted after their retention (OUTBOX_RETENTION_MS)",
    },
    deleteBatch: (limit) => purgeOutbox(db, retainMs, limit),
  };
}

/** Inbox rows whose events the service's streams can no longer deliver (`inboxRetentionMs`). */
export function inboxPurgeJob(options: {
  db: Kysely<any>;
  jsm: JetStreamManager;
  /** The streams the service consumes (full names). */
  streams: string[];
  marginMs: number;
  logger: Logger;
}): PeriodicJob {
  let keptInFull = false;
  return {
    name: "inbox",
    counter: {
      name: "humanpass_inbox_purged_rows_total",
      description: "Inbox rows deleted once their events' streams can no longer deliver them",
    },
    async deleteBatch(limit) {
      // Read before each statement, so a retention changed by the topology step applies without a restart.
      const retainMs = await inboxRetentionMs(options.jsm, options.streams, options.marginMs);
      if (retainMs === undefined && !keptInFull)
        options.logger.info(
          { streams: options.streams },
          "inbox kept in full: a stream it follows has no max_age",
        );
      keptInFull = retainMs === undefined;
      return retainMs === undefined ? undefined : purgeInbox(options.db, retainMs, limit);
    },
  };
}
