/**
 * The services run as their bundles (dist/service.js, from `make build`): a stack trace through them, under
 * `--enable-source-maps`, names the `.ts` line of our code, and names the bundle's own line for node_modules code
 * rather than a wrong `.ts` line (checked with Node's own source map implementation, as the process applies it).
 * The verifier's worker-thread bundle checks a real proof.
 */
import { readFileSync } from "node:fs";
import { SourceMap } from "node:module";
import path from "node:path";
import { Worker } from "node:worker_threads";
import { REPO_ROOT } from "@humanpass/testing/service-process";
import { ANY_PROOF_AGE_MS, FIXTURE_CONTEXTS_DIR, stable } from "@humanpass/verifier/testing";
import { afterAll, describe, expect, it } from "vitest";
import { SERVICE_NAMES } from "../src/stack.ts";

/** Where Node maps the first occurrence of `needle` in the bundle: the source file (absolute) and its 1-based line. */
function mappedPosition(service: string, needle: string) {
  const bundle = path.join(REPO_ROOT, "services", service, "dist/service.js");
  const lines = readFileSync(bundle, "utf8").split("\n");
  const line = lines.findIndex((l) => l.includes(needle));
  expect(line, `${needle} in ${bundle}`).toBeGreaterThanOrEqual(0);
  const map = new SourceMap(JSON.parse(readFileSync(`${bundle}.map`, "utf8")));
  const entry = map.findEntry(line, lines[line]!.indexOf(needle)) as {
    originalSource?: string;
    originalLine?: number;
  };
  if (!entry.originalSource) return undefined;
  return {
    file: path.resolve(path.dirname(bundle), entry.originalSource),
    line: entry.originalLine! + 1,
  };
}

/** The 1-based line of the first occurrence of `needle` in a source file of the repository. */
function sourceLine(file: string, needle: string): number {
  return (
    readFileSync(path.join(REPO_ROOT, file), "utf8")
      .split("\n")
      .findIndex((l) => l.includes(needle)) + 1
  );
}

describe.each(SERVICE_NAMES)("the bundle of %s", (service) => {
  it("maps the lines of the service and of the workspace libraries to their .ts sources", () => {
    expect(mappedPosition(service, '"start-up failed"')).toEqual({
      file: path.join(REPO_ROOT, "libs/service/src/index.ts"),
      line: sourceLine("libs/service/src/index.ts", '"start-up failed"'),
    });
    expect(mappedPosition(service, "await runService(")).toEqual({
      file: path.join(REPO_ROOT, "services", service, "src/main.ts"),
      line: sourceLine(`services/${service}/src/main.ts`, "await runService("),
    });
  });

  it("leaves bundled node_modules code unmapped instead of naming a line of ours", () => {
    // Fastify's own error for a second content-type parser of one type, bundled into every service.
    expect(mappedPosition(service, '"FST_ERR_CTP_ALREADY_PRESENT"')).toBeUndefined();
  });
});

type Done = { ok: boolean; outcome?: any; message?: string };

/** A verification thread from the verifier's worker bundle, answering its state look-ups as the main thread would. */
function bundledWorker(engine: "batch" | "library") {
  const dist = path.join(REPO_ROOT, "services/verifier/dist");
  const worker = new Worker(path.join(dist, "verification-worker.js"), {
    workerData: {
      settings: {
        networks: [stable.network],
        chains: {},
        localContextDirs: [FIXTURE_CONTEXTS_DIR],
        proofMaxAgeMs: ANY_PROOF_AGE_MS,
        engine,
      },
      mod: path.join(dist, "web-worker-noop.cjs"),
    },
  });
  const outcomes = new Map<number, (message: Done) => void>();
  const ready = new Promise((resolve, reject) => {
    worker.on("message", (message) => {
      if (message.type === "ready") resolve(undefined);
      else if (message.type === "failed") reject(new Error(message.message));
      else if (message.type === "done") outcomes.get(message.jobId)?.(message);
      else if (message.type === "call") {
        // Every identity state and GIST root is the latest one, as the verifier's own tests assume.
        const latest = { latest: true, genesis: false, state: null, transitionTimestamp: 0 };
        worker.postMessage({ type: "reply", callId: message.callId, ok: true, value: latest });
      }
    });
    worker.once("error", reject);
  });
  let nextJobId = 1;
  const verify = (token: string) =>
    new Promise<Done>((resolve) => {
      const jobId = nextJobId++;
      outcomes.set(jobId, resolve);
      worker.postMessage({
        type: "verify",
        jobId,
        token,
        request: stable.request,
        sessionId: stable.sessionId,
      });
    });
  return { ready, verify, terminate: () => worker.terminate() };
}

const nullifierOf = (done: Done) =>
  done.ok && done.outcome.kind === "verified" && done.outcome.proof.nullifier;

describe("the bundle of the verifier's worker thread", () => {
  const batch = bundledWorker("batch");
  const library = bundledWorker("library");
  afterAll(() => Promise.all([batch.terminate(), library.terminate()]));

  it("verifies an iden3 V3 token and returns its nullifier; one digit of the proof changed, it refuses it", async () => {
    await batch.ready;
    expect(nullifierOf(await batch.verify(stable.token))).toBe(stable.nullifier);
    const [header, payload, proof] = stable.token.split(".");
    const bytes = Buffer.from(proof!, "base64url");
    const digit = bytes.indexOf(Buffer.from("pi_a")) + 12;
    bytes[digit] = bytes[digit] === 0x31 ? 0x32 : 0x31;
    const refused = await batch.verify([header, payload, bytes.toString("base64url")].join("."));
    expect(refused.ok && refused.outcome.kind).not.toBe("verified");
  }, 120_000);

  it("verifies tokens in flight together, their proofs checked in one batch", async () => {
    await batch.ready;
    const outcomes = await Promise.all([1, 2, 3, 4].map(() => batch.verify(stable.token)));
    expect(outcomes.map(nullifierOf)).toEqual(Array(4).fill(stable.nullifier));
  }, 120_000);

  it("verifies with the iden3 libraries' own Groth16 code (VERIFIER_ENGINE=library)", async () => {
    await library.ready;
    expect(nullifierOf(await library.verify(stable.token))).toBe(stable.nullifier);
  }, 120_000);
});
