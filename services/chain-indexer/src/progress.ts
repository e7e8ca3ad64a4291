import { type Clock, systemClock } from "@humanpass/service";
import type { Logger } from "pino";

/** Logs backfill progress at most once per interval: block, target, blocks/s, records/s and ETA. */
export class ProgressReporter {
  private windowStart = 0;
  private windowStartBlock: bigint | undefined;
  private windowRecords = 0;
  private catchingUp = false;

  private readonly logger: Logger;
  private readonly intervalMs: number;
  private readonly now: Clock;

  constructor(logger: Logger, intervalMs: number, now: Clock = systemClock) {
    this.logger = logger;
    this.intervalMs = intervalMs;
    this.now = now;
  }

  /** After each committed range [from, block]; `target` is the newest confirmed block. */
  committed(from: bigint, block: bigint, target: bigint, records: number): void {
    if (this.windowStartBlock === undefined) {
      this.windowStartBlock = from - 1n;
      this.windowStart = this.now();
    }
    this.windowRecords += records;
    const behind = target > block;
    if (behind) this.catchingUp = true;
    const elapsedMs = this.now() - this.windowStart;
    if (!behind && this.catchingUp) {
      this.catchingUp = false;
      this.logger.info({ block: Number(block) }, "caught up with the chain; following new blocks");
    } else if (behind && elapsedMs >= this.intervalMs) {
      const blocksPerSecond = (Number(block - this.windowStartBlock) * 1000) / elapsedMs;
      const recordsPerSecond = (this.windowRecords * 1000) / elapsedMs;
      this.logger.info(
        {
          block: Number(block),
          target: Number(target),
          blocksPerSecond: Math.round(blocksPerSecond * 10) / 10,
          recordsPerSecond: Math.round(recordsPerSecond),
          etaSeconds: blocksPerSecond > 0 ? Math.round(Number(target - block) / blocksPerSecond) : null,
        },
        "backfill progress",
      );
    } else {
      return;
    }
    this.windowStart = this.now();
    this.windowStartBlock = block;
    this.windowRecords = 0;
  }
}
