export interface Backoff {
  /** The delay before the second attempt; each later one doubles it. */
  baseMs: number;
  /** The ceiling the doubling stops at. */
  maxMs: number;
  /**
   * The delay is drawn uniformly between these fractions of the capped delay, so that clients that failed together
   * do not retry in step: `[0, 1]` is full jitter, `[0.5, 1]` equal jitter, `[1, 1.1]` up to 10 % more. Default
   * `[1, 1]`: no jitter.
   */
  jitter?: readonly [from: number, to: number];
}

/** Delay before attempt `attempt + 1` (`attempt` counts from 1): exponential from `baseMs`, capped at `maxMs`, jittered. */
export function backoffDelay(
  { attempt, baseMs, maxMs, jitter = [1, 1] }: Backoff & { attempt: number },
  random: () => number = Math.random,
): number {
  const capped = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
  const [from, to] = jitter;
  return Math.round(capped * (from + (to - from) * random()));
}
