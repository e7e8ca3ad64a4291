import { describe, expect, it } from "vitest";
import { type RegistryLog, wholeBlocksWithin } from "./logs";

const logsIn = (...blocks: number[]) => blocks.map((b) => ({ blockNumber: BigInt(b) }) as RegistryLog);

describe("wholeBlocksWithin", () => {
  it("keeps every log when they fit", () => {
    expect(wholeBlocksWithin(logsIn(1, 1, 2), 3)).toBe(3);
  });

  it("ends at the last whole block that fits", () => {
    expect(wholeBlocksWithin(logsIn(1, 1, 2, 2, 2, 3), 4)).toBe(2);
    expect(wholeBlocksWithin(logsIn(1, 2, 3, 3), 3)).toBe(2);
    expect(wholeBlocksWithin(logsIn(1, 2, 3, 4), 3)).toBe(3);
  });

  it("keeps a first block larger than the limit whole", () => {
    expect(wholeBlocksWithin(logsIn(5, 5, 5, 6), 2)).toBe(3);
  });
});
