import type { NetworkSettings } from "../config.ts";
import type { VerifierEngine } from "./engine.ts";
import type { MillerLoopPath } from "./mcl-miller-loop-vec.ts";
import type { AuthorizationRequest, ResolvedState, VerificationOutcome } from "./token-verifier.ts";

/** What a verification thread needs to build its verifier; everything injectable stays in the main thread. */
export interface WorkerSettings {
  /** Network keys (`billions:main`, …) the main thread has state resolvers for. */
  networks: string[];
  /** Networks whose State contract the thread reads itself, over their RPC. */
  chains: Record<string, NetworkSettings>;
  localContextDirs: string[];
  proofMaxAgeMs?: number;
  engine?: VerifierEngine;
  /** Nice value of the verification threads (Linux: per thread). */
  niceness?: number;
}

/** When the worker started and ended a job (ms since the epoch): the main thread records the job's span from them. */
export interface WorkTimes {
  startedAt: number;
  endedAt: number;
}

export type HostCall =
  | { method: "resolve"; network: string; id: bigint; state: bigint }
  | { method: "rootResolve"; network: string; state: bigint }
  | { method: "document"; url: string };

export type ToWorker =
  | { type: "verify"; jobId: number; token: string; request: AuthorizationRequest; sessionId: bigint }
  | { type: "reply"; callId: number; ok: true; value: ResolvedState | unknown }
  | { type: "reply"; callId: number; ok: false; message: string };

export type FromWorker =
  | { type: "ready"; millerLoop: MillerLoopPath }
  | { type: "failed"; message: string }
  | ({ type: "done"; jobId: number; ok: true; outcome: VerificationOutcome } & WorkTimes)
  | ({ type: "done"; jobId: number; ok: false; message: string } & WorkTimes)
  | { type: "batch"; proofs: number }
  | { type: "call"; callId: number; call: HostCall };
