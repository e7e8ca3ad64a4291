import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { sleep } from "@humanpass/retry";

export const REPO_ROOT = path.resolve(new URL("../../..", import.meta.url).pathname);

export interface ServiceProcess {
  name: string;
  url: string;
  child: ChildProcess;
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

export type LogSink = (service: string, line: string) => void;

/**
 * Runs a service as its image does (its bundle, dist/service.js) in its own node process, every output line
 * handed to `log` with the service's name.
 */
export function startServiceProcess(options: {
  name: string;
  entry: string;
  env: Record<string, string>;
  url: string;
  log: LogSink;
}): ServiceProcess {
  const entry = path.join(REPO_ROOT, options.entry);
  if (!existsSync(entry)) throw new Error(`${options.entry} is missing: run \`make build\` first`);
  const child = spawn(process.execPath, ["--enable-source-maps", entry], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  for (const stream of [child.stdout!, child.stderr!]) {
    createInterface({ input: stream }).on("line", (line) => options.log(options.name, line));
  }
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    name: options.name,
    url: options.url,
    child,
    exited,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * Resolves when GET url answers 200; rejects when the process exits first or the time runs out. A deadline, not a
 * wait: a start takes seconds alone, and minutes on a 2-core machine running test suites beside it.
 */
export async function waitUntilReady(
  proc: ServiceProcess,
  path = "/readyz",
  timeoutMs = 180_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exitCode: number | null | undefined;
  proc.exited.then((code) => {
    exitCode = code;
  });
  for (;;) {
    if (exitCode !== undefined) throw new Error(`${proc.name} exited (code ${exitCode}) before it was ready`);
    try {
      const res = await fetch(`${proc.url}${path}`, { signal: AbortSignal.timeout(2_000) });
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline)
      throw new Error(`${proc.name} was not ready at ${proc.url}${path} within ${timeoutMs} ms`);
    await sleep(200);
  }
}
