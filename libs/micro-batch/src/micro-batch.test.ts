import { describe, expect, it } from "vitest";
import { chunksByKey, groupWriter, microBatcher } from "./micro-batch.ts";

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

describe("groupWriter", () => {
  it("writes a lone item at once, and together what arrives while a write runs", async () => {
    const writes: number[][] = [];
    let finish: () => void = () => {};
    const writer = groupWriter<number>(async (items) => {
      writes.push(items);
      await new Promise<void>((resolve) => {
        finish = resolve;
      });
    });
    const first = writer.add(1);
    expect(writes).toEqual([[1]]);
    const later = [writer.add(2), writer.add(3)];
    await nextTurn();
    writer.add(4);
    expect(writes).toEqual([[1]]);
    finish();
    await first;
    await nextTurn();
    expect(writes).toEqual([[1], [2, 3, 4]]);
    finish();
    await Promise.all(later);
    await writer.idle();
  });

  it("rejects the items of a failed write, and writes the next ones", async () => {
    let fail = true;
    const written: number[] = [];
    const writer = groupWriter<number>(async (items) => {
      if (fail) throw new Error("database away");
      written.push(...items);
    });
    await expect(writer.add(1)).rejects.toThrow("database away");
    fail = false;
    await writer.add(2);
    expect(written).toEqual([2]);
  });
});
