import { backoffDelay, sleep } from "@humanpass/retry";
import type { Logger } from "pino";
import { BaseError, HttpRequestError, RpcRequestError, TimeoutError } from "viem";

export interface RetryPolicy {
  baseMs: number;
  maxMs: number;
}

export class StoppedError extends Error {
  override name = "StoppedError";
}

export type RpcErrorReason = "rate_limited" | "timeout" | "http" | "rpc" | "other";

export function rpcErrorReason(error: unknown): RpcErrorReason {
  const http = error instanceof BaseError ? error.walk((e) => e instanceof HttpRequestError) : undefined;
  if (http instanceof HttpRequestError) return http.status === 429 ? "rate_limited" : "http";
  if (error instanceof BaseError && error.walk((e) => e instanceof TimeoutError)) return "timeout";
  if (error instanceof BaseError && error.walk((e) => e instanceof RpcRequestError)) return "rpc";
  return "other";
}

/** Whether the answer exceeded viem's response size limit: asking again for the same will not help. */
export function isResponseTooLarge(error: unknown): boolean {
  return (
    error instanceof BaseError && !!error.walk((e) => (e as BaseError).name === "ResponseBodyTooLargeError")
  );
}

export interface RetryOptions {
  policy: RetryPolicy;
  logger: Logger;
  /** Counted per failed attempt (metrics). */
  onError?: (reason: RpcErrorReason) => void;
  /** Errors the caller handles itself (e.g. a range the RPC refuses as too large): thrown at once. */
  isFinal?: (error: unknown) => boolean;
  /** Aborting ends the wait and throws StoppedError. */
  signal?: AbortSignal;
}

/** Runs an RPC step until it succeeds: RPC errors, timeouts and 429s are retried with back-off, each retry logged. */
export async function withRetry<T>(what: string, fn: () => Promise<T>, options: RetryOptions): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    if (options.signal?.aborted) throw new StoppedError(`stopped before ${what}`);
    try {
      return await fn();
    } catch (error) {
      if (options.isFinal?.(error) || options.signal?.aborted) throw error;
      const reason = rpcErrorReason(error);
      options.onError?.(reason);
      const delayMs = backoffDelay({ ...options.policy, attempt, jitter: [0.5, 1] });
      options.logger.warn(
        {
          what,
          attempt,
          reason,
          retryInMs: delayMs,
          err: error instanceof BaseError ? error.shortMessage : String(error),
        },
        "RPC call failed; retrying",
      );
      await sleep(delayMs, options.signal);
    }
  }
}
