import { setTimeout as delay } from "node:timers/promises";

/** Waits `ms`, or less when `signal` aborts: a stopping loop does not sit out its back-off. Never rejects. */
export const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  delay(Math.max(0, ms), undefined, { signal }).then(
    () => {},
    () => {},
  );
