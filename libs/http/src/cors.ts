import type { FastifyCorsOptions } from "@fastify/cors";

/**
 * Answers a browser may read from another origin: the x402 payment headers of a 402 and of a paid answer, and
 * when to come back after a 429 or 503.
 */
export const EXPOSED_HEADERS = [
  "PAYMENT-REQUIRED",
  "PAYMENT-RESPONSE",
  "Retry-After",
  "X-RateLimit-Limit",
  "X-RateLimit-Remaining",
  "X-RateLimit-Reset",
];

/** How long a browser may reuse a preflight's answer, in seconds. */
export const PREFLIGHT_MAX_AGE_S = 600;

/**
 * @fastify/cors for `origins` (`["*"]`: any origin, answered with `*`, as no call carries credentials). A listed
 * origin is echoed back, with `Vary: Origin` on every answer since it depends on the caller; a preflight from any
 * other gets no `Access-Control-Allow-Origin` and the browser refuses the call.
 */
export function corsPluginOptions(origins: string[]): FastifyCorsOptions {
  return {
    origin: origins,
    methods: "GET,HEAD,PUT,PATCH,POST,DELETE",
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: PREFLIGHT_MAX_AGE_S,
    // A bare OPTIONS is answered as a preflight would be, rather than with the plugin's plain-text 400.
    strictPreflight: false,
  };
}
