export { type Backoff, backoffDelay } from "./backoff.ts";
export { sleep } from "./sleep.ts";
