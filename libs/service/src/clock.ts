/**
 * Now, in milliseconds since the epoch: what services read the time through, so tests can move it (expire
 * sessions and nonces, run a day of delivery retries) without waiting. The shape of the SDK's `now` options.
 */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();
