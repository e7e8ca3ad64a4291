/** The service's notion of now; tests move it to expire sessions without waiting. */
export type Clock = () => Date;

export const systemClock: Clock = () => new Date();
