import { describe, expect, it } from "vitest";
import { chunksByKey, microBatcher } from "./micro-batch.ts";

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("microBatcher", () => {
  it("hands over together what is added in one turn, and what comes later in the next batch", async () => {
    const batches: number[][] = [];
    const batcher = microBatcher<number>((items) => batches.push(items));
    batcher.add(1);
    batcher.add(2);
    await Promise.resolve();
    batcher.add(3);
    expect(batches).toEqual([]);
    await nextTurn();
    batcher.add(4);
    await nextTurn();
    expect(batches).toEqual([[1, 2, 3], [4]]);
  });

  it("hands over at once on flush, and never an empty batch", async () => {
    const batches: number[][] = [];
    const batcher = microBatcher<number>((items) => batches.push(items));
    batcher.add(1);
    batcher.flush();
    expect(batches).toEqual([[1]]);
    batcher.flush();
    await nextTurn();
    expect(batches).toEqual([[1]]);
  });
});

describe("chunksByKey", () => {
  it("groups by key in order of first appearance and cuts each group at the maximum", () => {
    expect(chunksByKey(["a1", "b1", "a2", "a3", "b2"], (s) => s[0], 2)).toEqual([
      { key: "a", items: ["a1", "a2"] },
      { key: "a", items: ["a3"] },
      { key: "b", items: ["b1", "b2"] },
    ]);
  });
});
