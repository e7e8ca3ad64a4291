import { setPriority } from "node:os";
import { parentPort, workerData } from "node:worker_threads";
import { chainStateResolvers } from "../state-resolvers.ts";
import { createDocumentLoader } from "./document-loader.ts";
import { millerLoopPath } from "./mcl-miller-loop-vec.ts";
import {
  createTokenVerifier,
  type ResolvedState,
  type StateResolvers,
  type TokenVerifier,
} from "./token-verifier.ts";
import type { FromWorker, HostCall, ToWorker, WorkerSettings } from "./worker-protocol.ts";

const port = parentPort;
if (!port) throw new Error("verification-worker must run in a worker thread");
const settings = (workerData as { settings: WorkerSettings }).settings;

// On Linux the nice value is per thread: verification yields the cores to the event loop (status, health,
// Postgres) when both compete, and still uses all idle CPU. Set once the libraries are loaded: a replica restarted on
// a busy host would otherwise load them last, and /readyz waits for them.
function yieldToEventLoop(): void {
  if (!settings.niceness) return;
  try {
    setPriority(0, settings.niceness);
  } catch {
    // Not permitted on this platform: verification just runs at normal priority.
  }
}

const pendingCalls = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
let nextCallId = 1;

function send(message: FromWorker): void {
  port?.postMessage(message);
}

function callHost<T>(call: HostCall): Promise<T> {
  const callId = nextCallId++;
  return new Promise<T>((resolve, reject) => {
    pendingCalls.set(callId, { resolve: resolve as (value: unknown) => void, reject });
    send({ type: "call", callId, call });
  });
}

const stateResolvers: StateResolvers = {
  ...Object.fromEntries(
    settings.networks.map((network) => [
      network,
      {
        resolve: (id: bigint, state: bigint) =>
          callHost<ResolvedState>({ method: "resolve", network, id, state }),
        rootResolve: (state: bigint) => callHost<ResolvedState>({ method: "rootResolve", network, state }),
      },
    ]),
  ),
  ...chainStateResolvers(settings.chains),
};

const verifierReady: Promise<TokenVerifier> = createTokenVerifier({
  stateResolvers,
  documentLoader: createDocumentLoader({
    localDirs: settings.localContextDirs,
    fetchRemote: (url) => callHost<unknown>({ method: "document", url }),
  }),
  proofMaxAgeMs: settings.proofMaxAgeMs,
  engine: settings.engine,
  onBatch: (proofs) => send({ type: "batch", proofs }),
});

verifierReady.then(
  () => {
    yieldToEventLoop();
    send({ type: "ready", millerLoop: millerLoopPath() });
  },
  (error: Error) => send({ type: "failed", message: error.message }),
);

port.on("message", (message: ToWorker) => {
  if (message.type === "reply") {
    const pending = pendingCalls.get(message.callId);
    if (!pending) return;
    pendingCalls.delete(message.callId);
    if (message.ok) pending.resolve(message.value);
    else pending.reject(new Error(message.message));
    return;
  }
  const { jobId, token, request, sessionId } = message;
  const startedAt = Date.now();
  verifierReady
    .then((verifier) => verifier.verify(token, request, sessionId))
    .then(
      (outcome) => send({ type: "done", jobId, ok: true, outcome, startedAt, endedAt: Date.now() }),
      (error: unknown) =>
        send({
          type: "done",
          jobId,
          ok: false,
          message: error instanceof Error ? error.message : String(error),
          startedAt,
          endedAt: Date.now(),
        }),
    );
});
