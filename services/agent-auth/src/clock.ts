/** Milliseconds since the epoch; injected so tests can age nonces without waiting. */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();
