import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from "fastify";
import { HttpError } from "./errors";

export interface RateLimitOptions {
  /** Requests a client may make per window. */
  max: number;
  timeWindowMs: number;
  /** Paths (without query) that are never limited. */
  exempt?: string[];
  /** Most clients tracked at once; past it the oldest window is dropped (that client starts afresh). */
  maxClients?: number;
}

export interface RateDecision {
  allowed: boolean;
  /** Requests left in the window. */
  remaining: number;
  /** Until the window ends, in ms. */
  resetInMs: number;
}

/**
 * Requests counted per client in fixed windows, each starting at the client's first request. In memory: each replica
 * limits what reaches it. All windows are equally long and kept in the order they started, so the ended ones are
 * always at the front of the map, and dropping them costs nothing per request.
 */
export class FixedWindowLimiter {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();

  constructor(
    private readonly max: number,
    private readonly windowMs: number,
    private readonly maxClients = 100_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one request of `client`. */
  take(client: string): RateDecision {
    const now = this.now();
    for (const [key, ended] of this.windows) {
      if (ended.resetAt > now) break;
      this.windows.delete(key);
    }
    let window = this.windows.get(client);
    if (!window) {
      window = { count: 0, resetAt: now + this.windowMs };
      this.windows.set(client, window);
      if (this.windows.size > this.maxClients) this.windows.delete(this.windows.keys().next().value!);
    }
    window.count++;
    return {
      allowed: window.count <= this.max,
      remaining: Math.max(0, this.max - window.count),
      resetInMs: window.resetAt - now,
    };
  }

  /** Clients with a window that has not ended. */
  get size(): number {
    return this.windows.size;
  }
}

/**
 * An onRequest hook limiting each client IP: every counted answer carries `x-ratelimit-limit`, `-remaining` and
 * `-reset` (seconds); past the limit, `429 rate_limited` with `Retry-After`. Synchronous, since it runs on every
 * request and has nothing to wait for.
 */
export function rateLimitHook(options: RateLimitOptions) {
  const limiter = new FixedWindowLimiter(options.max, options.timeWindowMs, options.maxClients);
  const exempt = new Set(options.exempt ?? []);
  const limit = String(options.max);
  const per = describeWindow(options.timeWindowMs);
  return (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    const query = request.url.indexOf("?");
    if (exempt.has(query < 0 ? request.url : request.url.slice(0, query))) return done();
    const { allowed, remaining, resetInMs } = limiter.take(request.ip);
    const reset = String(Math.ceil(resetInMs / 1000));
    const headers = {
      "x-ratelimit-limit": limit,
      "x-ratelimit-remaining": String(remaining),
      "x-ratelimit-reset": reset,
    };
    if (allowed) {
      reply.headers(headers);
      return done();
    }
    done(
      new HttpError(
        429,
        "rate_limited",
        `Rate limit exceeded: ${limit} requests per ${per}; retry in ${reset} s`,
        {
          ...headers,
          "retry-after": reset,
        },
      ),
    );
  };
}

function describeWindow(ms: number): string {
  if (ms % 60_000 === 0) return ms === 60_000 ? "minute" : `${ms / 60_000} minutes`;
  if (ms % 1000 === 0) return ms === 1000 ? "second" : `${ms / 1000} seconds`;
  return `${ms} ms`;
}
