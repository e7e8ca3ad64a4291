import { backoffDelay } from "@humanpass/retry";

/**
 * Wait before attempt `attempt + 1`: 10 s doubling to a 1 h ceiling, each with up to 10 % jitter so that
 * deliveries that failed together do not come back together. Retries go on until the retry window (24 h or more)
 * has passed since the first attempt, about 30 attempts.
 */
export function retryDelayMs(attempt: number, random: () => number = Math.random): number {
  return backoffDelay({ attempt, baseMs: 10_000, maxMs: 3_600_000, jitter: [1, 1.1] }, random);
}
