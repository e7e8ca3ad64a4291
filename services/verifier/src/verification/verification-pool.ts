import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { Meter } from "@humanpass/telemetry";
import { type Context, context, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import type { NetworkSettings } from "../config.ts";
import type { RemoteDocumentFetcher } from "./document-loader.ts";
import { MAX_BATCH, type VerifierEngine } from "./engine.ts";
import type { MillerLoopPath } from "./mcl-miller-loop-vec.ts";
import type {
  AuthorizationRequest,
  StateResolvers,
  TokenVerifier,
  VerificationOutcome,
} from "./token-verifier.ts";
import type { FromWorker, HostCall, ToWorker, WorkerSettings } from "./worker-protocol.ts";

export interface VerificationPoolOptions {
  /** Worker threads; defaults to the number of cores. */
  size?: number;
  /** Called in the main thread on behalf of the workers (they are injectable and may hold caches). */
  stateResolvers?: StateResolvers;
  /**
   * Networks whose iden3 State contract each worker reads itself, over the RPC, with the library's resolver and
   * caches: the main thread then never loads the iden3 libraries, which is what makes it ready as soon as the first
   * worker is (the cost: each worker fills its own cache).
   */
  chains?: Record<string, NetworkSettings>;
  /** Fetches contexts no local directory holds; called once per URL, in the main thread. */
  fetchRemoteDocument?: RemoteDocumentFetcher;
  localContextDirs: string[];
  proofMaxAgeMs?: number;
  engine?: VerifierEngine;
  /** Nice value for the worker threads (default 10): the event loop stays ahead of verification. */
  niceness?: number;
  /** Jobs beyond this many waiting are refused instead of queued without bound. */
  maxQueued?: number;
  /** A job (including its state and document look-ups) that takes longer fails. */
  jobTimeoutMs?: number;
  onWorkerError?: (error: Error) => void;
  /** Called as each worker becomes able to verify (the first makes the pool ready). */
  onWorkerReady?: (index: number, details: { millerLoop: MillerLoopPath }) => void;
  /** Where the queue-depth and batch-size series go; none without. */
  meter?: Meter;
}

export interface VerificationPool extends TokenVerifier {
  /**
   * Resolves once the first worker has built its verifier and can take jobs; the others start loading only then,
   * so on a busy host they do not compete with it, and take jobs as each is ready. Rejects if the first cannot.
   */
  ready(): Promise<void>;
  close(): Promise<void>;
}

interface Job {
  jobId: number;
  token: string;
  request: AuthorizationRequest;
  sessionId: bigint;
  resolve: (outcome: VerificationOutcome) => void;
  reject: (error: Error) => void;
  timer?: NodeJS.Timeout;
  /** The caller's context (its callback's span): the job's span is its child. */
  parent: Context;
}

interface Slot {
  worker: Worker;
  ready: Promise<void>;
  /** Jobs go only to a worker that has built its verifier. */
  isReady: boolean;
  inFlight: Map<number, Job>;
}

/**
 * How many jobs a worker holds at once. Checking proofs one by one, two let one wait for a state look-up while
 * the other computes. Batching, a worker takes every queued job up to a batch: the jobs that arrive while it
 * computes are the next batch, and a job that finds it idle starts at once.
 */
const jobsPerWorker = (engine: VerifierEngine) => (engine === "batch" ? MAX_BATCH : 2);
// The worker module beside this one: its TypeScript source (run by Node's type stripping, in dev and tests) or its
// compiled JavaScript (dist/, the bundle).
const workerEntry = import.meta.url.endsWith(".ts")
  ? new URL("./verification-worker.ts", import.meta.url)
  : new URL("./verification-worker.js", import.meta.url);
const webWorkerNoop = fileURLToPath(new URL("./web-worker-noop.cjs", import.meta.url));
const tracer = trace.getTracer("@humanpass/verifier");

/**
 * The span of a job's proof verification, as long as the worker worked on it. Recorded in this thread from the
 * times the worker reports, under the caller's context carried with the job: a worker thread has no tracer
 * provider of its own (the SDK and its exporter would be loaded once per worker, and spans could not reach the
 * process's exporter anyway), so this is how its work appears in the callback's trace.
 */
function recordJobSpan(
  job: Job,
  worker: number,
  times: { startedAt: number; endedAt: number },
  error?: string,
) {
  const span = tracer.startSpan(
    "verify proof",
    {
      kind: SpanKind.INTERNAL,
      startTime: times.startedAt,
      attributes: { "thread.name": `verification-worker-${worker}` },
    },
    job.parent,
  );
  if (error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: error });
  span.end(times.endedAt);
}

/** Proofs checked together: 1 when alone, up to the engine's batch size under load. */
const BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128];

export function createVerificationPool(options: VerificationPoolOptions): VerificationPool {
  const size = Math.max(1, options.size ?? availableParallelism());
  const maxQueued = options.maxQueued ?? 1000;
  const jobTimeoutMs = options.jobTimeoutMs ?? 60_000;
  const engine = options.engine ?? "batch";
  const capacity = jobsPerWorker(engine);
  const settings: WorkerSettings = {
    networks: Object.keys(options.stateResolvers ?? {}),
    chains: options.chains ?? {},
    localContextDirs: options.localContextDirs,
    proofMaxAgeMs: options.proofMaxAgeMs,
    engine,
    niceness: options.niceness ?? 10,
  };
  const documents = new Map<string, Promise<unknown>>();
  const queue: Job[] = [];
  const slots: Slot[] = [];
  let nextJobId = 1;
  let closed = false;
  const batchSize = options.meter?.createHistogram("humanpass_verifier_verification_batch_size", {
    description: "Proofs a verification worker checked in one batch",
    unit: "{proof}",
    advice: { explicitBucketBoundaries: BATCH_BUCKETS },
  });
  options.meter
    ?.createObservableGauge("humanpass_verifier_worker_queue_depth", {
      description: "Verification jobs waiting for a worker thread",
      unit: "{job}",
    })
    .addCallback((result) => result.observe(queue.length));

  const hostCall = (call: HostCall): Promise<unknown> => {
    if (call.method === "document") {
      let document = documents.get(call.url);
      if (!document) {
        const fetchRemote = options.fetchRemoteDocument;
        document = fetchRemote
          ? fetchRemote(call.url)
          : Promise.reject(new Error(`JSON-LD context ${call.url} is not available locally`));
        documents.set(call.url, document);
        document.catch(() => documents.delete(call.url));
      }
      return document;
    }
    const resolver = options.stateResolvers?.[call.network];
    if (!resolver) return Promise.reject(new Error(`resolver not found for network ${call.network}`));
    return call.method === "resolve"
      ? resolver.resolve(call.id, call.state)
      : resolver.rootResolve(call.state);
  };

  const finish = (slot: Slot, jobId: number): Job | undefined => {
    const job = slot.inFlight.get(jobId);
    if (!job) return undefined;
    slot.inFlight.delete(jobId);
    clearTimeout(job.timer);
    return job;
  };

  const dispatch = (): void => {
    while (queue.length > 0) {
      const slot = slots
        .filter((s) => s.isReady && s.inFlight.size < capacity)
        .sort((a, b) => a.inFlight.size - b.inFlight.size)[0];
      if (!slot) return;
      const job = queue.shift() as Job;
      slot.inFlight.set(job.jobId, job);
      job.timer = setTimeout(() => {
        if (finish(slot, job.jobId)) job.reject(new Error("verification timed out"));
        dispatch();
      }, jobTimeoutMs);
      const message: ToWorker = {
        type: "verify",
        jobId: job.jobId,
        token: job.token,
        request: job.request,
        sessionId: job.sessionId,
      };
      slot.worker.postMessage(message);
    }
  };

  const spawn = (index: number): Slot => {
    const worker = new Worker(workerEntry, { workerData: { settings, mod: webWorkerNoop } });
    let wasReady = false;
    let markReady: () => void = () => {};
    let markFailed: (error: Error) => void = () => {};
    const ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      markFailed = reject;
    });
    ready.catch(() => {});
    const slot: Slot = { worker, ready, isReady: false, inFlight: new Map() };
    worker.on("message", (message: FromWorker) => {
      switch (message.type) {
        case "ready":
          wasReady = true;
          slot.isReady = true;
          markReady();
          options.onWorkerReady?.(index, { millerLoop: message.millerLoop });
          dispatch();
          return;
        case "failed":
          markFailed(new Error(message.message));
          return;
        case "call":
          hostCall(message.call).then(
            (value) =>
              worker.postMessage({
                type: "reply",
                callId: message.callId,
                ok: true,
                value,
              } satisfies ToWorker),
            (error: unknown) =>
              worker.postMessage({
                type: "reply",
                callId: message.callId,
                ok: false,
                message: error instanceof Error ? error.message : String(error),
              } satisfies ToWorker),
          );
          return;
        case "done": {
          const job = finish(slot, message.jobId);
          if (job) {
            recordJobSpan(job, index, message, message.ok ? undefined : message.message);
            if (message.ok) job.resolve(message.outcome);
            else job.reject(new Error(message.message));
          }
          dispatch();
          return;
        }
        case "batch":
          batchSize?.record(message.proofs);
          return;
      }
    });
    // What a worker throws reaches "error" as thrown, which need not be an Error.
    worker.on("error", (error) =>
      options.onWorkerError?.(error instanceof Error ? error : new Error(String(error))),
    );
    worker.on("exit", (code) => {
      const error = new Error(`verification worker stopped (exit code ${code})`);
      slot.isReady = false;
      markFailed(error);
      for (const jobId of [...slot.inFlight.keys()]) finish(slot, jobId)?.reject(error);
      // A worker that never got ready would fail the same way again: no respawn loop.
      if (!closed && wasReady) {
        slots[index] = spawn(index);
        dispatch();
      }
    });
    return slot;
  };

  slots.push(spawn(0));
  const first = slots[0]!.ready;
  first.then(
    () => {
      for (let i = 1; i < size && !closed; i++) slots.push(spawn(i));
    },
    () => {},
  );

  return {
    async ready() {
      await first;
    },
    verify(token, request, sessionId) {
      if (closed) return Promise.reject(new Error("verification pool is closed"));
      if (queue.length >= maxQueued)
        return Promise.reject(new Error("verifier is overloaded, try again later"));
      return new Promise<VerificationOutcome>((resolve, reject) => {
        queue.push({
          jobId: nextJobId++,
          token,
          request,
          sessionId,
          resolve,
          reject,
          parent: context.active(),
        });
        dispatch();
      });
    },
    async close() {
      closed = true;
      const error = new Error("verification pool is closed");
      for (const job of queue.splice(0)) job.reject(error);
      await Promise.all(slots.map((slot) => slot.worker.terminate()));
    },
  };
}
