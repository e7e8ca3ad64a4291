/** The time deliveries are scheduled and signed by; injected so tests can run a day of retries in seconds. */
export type Clock = () => Date;

export const systemClock: Clock = () => new Date();
