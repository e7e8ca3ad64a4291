import { describe, expect, it } from "vitest";
import { backoffDelay } from "./backoff.ts";

describe("backoffDelay", () => {
  it("doubles from baseMs up to maxMs without jitter by default", () => {
    const delays = [1, 2, 3, 4, 5, 6].map((attempt) => backoffDelay({ attempt, baseMs: 100, maxMs: 1_000 }));
    expect(delays).toEqual([100, 200, 400, 800, 1_000, 1_000]);
  });

  it("stays at the ceiling for attempts far past it", () => {
    expect(backoffDelay({ attempt: 5_000, baseMs: 100, maxMs: 1_000 })).toBe(1_000);
  });

  it("draws the delay between the jitter's fractions of the capped delay", () => {
    const policy = { baseMs: 100, maxMs: 1_000, jitter: [0.5, 1] as const };
    expect(backoffDelay({ ...policy, attempt: 1 }, () => 0)).toBe(50);
    expect(backoffDelay({ ...policy, attempt: 1 }, () => 1)).toBe(100);
    expect(backoffDelay({ ...policy, attempt: 3 }, () => 0.5)).toBe(300);
    expect(backoffDelay({ ...policy, attempt: 30 }, () => 1)).toBe(1_000);
  });

  it("full jitter reaches from zero to the capped delay", () => {
    const full = { attempt: 4, baseMs: 100, maxMs: 1_000, jitter: [0, 1] as const };
    expect(backoffDelay(full, () => 0)).toBe(0);
    expect(backoffDelay(full, () => 0.25)).toBe(200);
    expect(backoffDelay(full, () => 1)).toBe(800);
  });

  it("jitter may reach above the capped delay", () => {
    const above = { attempt: 30, baseMs: 10_000, maxMs: 3_600_000, jitter: [1, 1.1] as const };
    expect(backoffDelay(above, () => 0)).toBe(3_600_000);
    expect(backoffDelay(above, () => 1)).toBe(3_960_000);
  });
});
