import { describe, expect, it } from "vitest";
import { sleep } from "./sleep.ts";

describe("sleep", () => {
  it("resolves after the wait", async () => {
    await expect(sleep(1)).resolves.toBeUndefined();
  });

  it("resolves at once, without rejecting, when the signal is already aborted", async () => {
    await expect(sleep(3_600_000, AbortSignal.abort())).resolves.toBeUndefined();
  });

  it("ends the wait when the signal aborts", async () => {
    const controller = new AbortController();
    const waiting = sleep(3_600_000, controller.signal);
    controller.abort();
    await expect(waiting).resolves.toBeUndefined();
  });

  it("treats a negative wait as none", async () => {
    await expect(sleep(-5)).resolves.toBeUndefined();
  });
});
