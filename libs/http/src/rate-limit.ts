import type { RateLimitPluginOptions } from "@fastify/rate-limit";
import { HttpError } from "./errors.ts";

export interface RateLimitOptions {
  /** Requests a client may make per window. */
  max: number;
  timeWindowMs: number;
  /** Paths (without query) that are never limited. */
  exempt?: string[];
  /** Most clients tracked at once; past it the least recently seen is dropped (that client starts afresh). */
  maxClients?: number;
}

/**
 * @fastify/rate-limit set up as every service limits: per client IP (`request.ip`, so TRUST_PROXY decides which
 * address counts), in memory (each replica limits what reaches it), fixed windows starting at the client's first
 * request. Counted answers carry `x-ratelimit-limit`, `-remaining` and `-reset` (seconds); past the limit,
 * `429 rate_limited` with `Retry-After`.
 */
export function rateLimitPluginOptions(options: RateLimitOptions): RateLimitPluginOptions {
  const exempt = new Set(options.exempt ?? []);
  const per = describeWindow(options.timeWindowMs);
  return {
    global: false,
    max: options.max,
    timeWindow: options.timeWindowMs,
    cache: options.maxClients ?? 100_000,
    allowList: (request) => {
      const query = request.url.indexOf("?");
      return exempt.has(query < 0 ? request.url : request.url.slice(0, query));
    },
    errorResponseBuilder: (_request, context) => {
      const retryIn = Math.ceil(context.ttl / 1000);
      return new HttpError(
        429,
        "rate_limited",
        `Rate limit exceeded: ${context.max} requests per ${per}; retry in ${retryIn} s`,
      );
    },
  };
}

function describeWindow(ms: number): string {
  if (ms % 60_000 === 0) return ms === 60_000 ? "minute" : `${ms / 60_000} minutes`;
  if (ms % 1000 === 0) return ms === 1000 ? "second" : `${ms / 1000} seconds`;
  return `${ms} ms`;
}
