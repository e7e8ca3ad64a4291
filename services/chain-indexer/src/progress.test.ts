import pino from "pino";
import { describe, expect, it } from "vitest";
import { ProgressReporter } from "./progress.ts";

describe("ProgressReporter", () => {
  it("logs block, target, rates and ETA once per interval while behind, then once when caught up", () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: "info" }, { write: (line: string) => lines.push(JSON.parse(line)) });
    let now = 0;
    const progress = new ProgressReporter(logger, 5_000, () => now);
    progress.committed(1n, 100n, 1_100n, 50);
    now = 2_000;
    progress.committed(101n, 200n, 1_100n, 100);
    now = 5_000;
    progress.committed(201n, 600n, 1_100n, 850);
    now = 6_000;
    progress.committed(601n, 1_100n, 1_100n, 10);

    expect(
      lines.map(({ msg, block, target, blocksPerSecond, recordsPerSecond, etaSeconds }) => ({
        msg,
        block,
        target,
        blocksPerSecond,
        recordsPerSecond,
        etaSeconds,
      })),
    ).toEqual([
      {
        msg: "backfill progress",
        block: 600,
        target: 1_100,
        blocksPerSecond: 120,
        recordsPerSecond: 200,
        etaSeconds: 4,
      },
      {
        msg: "caught up with the chain; following new blocks",
        block: 1_100,
        target: undefined,
        blocksPerSecond: undefined,
        recordsPerSecond: undefined,
        etaSeconds: undefined,
      },
    ]);
  });
});
