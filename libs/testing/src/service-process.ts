import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

/** How many of a process's last output lines are kept for the message of a failed start. */
const KEPT_LINES = 200;

export interface ServiceProcessOptions {
  /** For messages and the log. */
  name: string;
  /**
   * The script, relative to the repository root: a service's `src/main.ts` (run from source, as tests do) or its
   * bundle `dist/service.js` (as its image runs it).
   */
  entry: string;
  env: Record<string, string>;
  /** Node options before the script (a profiler's, say). */
  nodeArgs?: string[];
  /** The child's environment starts from this process's (default) or from PATH and HOME alone. */
  baseEnv?: "inherit" | "minimal";
  /** Its origin, where /readyz is asked. */
  url: string;
  /** Every output line, stdout and stderr. */
  log?: (line: string) => void;
  /** Until /readyz answers 200 (a deadline, not a wait: a start takes minutes on a busy 2-core machine). */
  readyTimeoutMs?: number;
}

export interface ServiceProcess {
  name: string;
  url: string;
  child: ChildProcess;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
  /** Its last output lines. */
  output(): string;
  /** SIGTERM (SIGKILL after 10 s); resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** Runs a service in its own node process; resolves once it is ready (see `waitUntilReady`). */
export async function startServiceProcess(options: ServiceProcessOptions): Promise<ServiceProcess> {
  const proc = spawnServiceProcess(options);
  try {
    await waitUntilReady(proc, options.readyTimeoutMs);
  } catch (e) {
    await proc.stop();
    throw e;
  }
  return proc;
}

/** Runs a service in its own node process and returns at once. */
export function spawnServiceProcess(options: ServiceProcessOptions): ServiceProcess {
  const entry = path.join(REPO_ROOT, options.entry);
  if (!existsSync(entry)) throw new Error(`${options.entry} is missing: run \`make build\` first`);
  // Sources import the workspace packages' sources, as tests and the dev loop do.
  const flags = entry.endsWith(".ts") ? ["--conditions=@humanpass/source"] : ["--enable-source-maps"];
  const base =
    options.baseEnv === "minimal"
      ? { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" }
      : process.env;
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), ...flags, entry], {
    cwd: REPO_ROOT,
    env: { ...base, ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  for (const stream of [child.stdout!, child.stderr!]) {
    createInterface({ input: stream }).on("line", (line) => {
      lines.push(line);
      if (lines.length > KEPT_LINES) lines.shift();
      options.log?.(line);
    });
  }
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    name: options.name,
    url: options.url,
    child,
    exited,
    output: () => lines.join("\n"),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/**
 * Resolves when GET /readyz answers 200; rejects, with the process's last output, when it exits first or the
 * deadline passes.
 */
export async function waitUntilReady(proc: ServiceProcess, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exitCode: number | null | undefined;
  proc.exited.then((code) => {
    exitCode = code;
  });
  const failure = (reason: string) => new Error(`${proc.name} ${reason}; its output:\n${proc.output()}`);
  for (;;) {
    if (exitCode !== undefined) throw failure(`exited (code ${exitCode}) before it was ready`);
    try {
      const res = await fetch(`${proc.url}/readyz`, { signal: AbortSignal.timeout(2_000) });
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw failure(`was not ready at ${proc.url}/readyz within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
