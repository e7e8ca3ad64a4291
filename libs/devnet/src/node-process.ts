import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { HARDHAT_CONFIG } from "./paths.ts";

const HARDHAT_CLI = join(
  dirname(createRequire(import.meta.url).resolve("hardhat/package.json")),
  "internal/cli/cli.js",
);
/** Where DEVNET_PROF=1 has the node write its CPU profiles: the package's own .run/ (ignored by git). */
const PROFILES_DIR = fileURLToPath(new URL("../.run/prof", import.meta.url));
const READY_LINE = /Started HTTP and WebSocket JSON-RPC server at (http:\/\/[^\s/]+:(\d+))\//;

export interface HardhatNode {
  rpcUrl: string;
  pid: number;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
let exitHookInstalled = false;

/** Kills nodes a test forgot to stop when this process exits normally; the config's watchdog covers kills. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const child of running) child.kill("SIGKILL");
  });
}

/**
 * Starts `hardhat node` as a child process on 127.0.0.1. Port 0 lets the OS pick a free port, which the
 * node reports on stdout, so concurrent test files never race for one.
 */
export async function startHardhatNode(options: {
  port: number;
  privateKeys: readonly string[];
  startTimeoutMs: number;
}): Promise<HardhatNode> {
  installExitHook();
  const child = spawn(
    process.execPath,
    [
      ...(process.env.DEVNET_PROF ? ["--cpu-prof", `--cpu-prof-dir=${PROFILES_DIR}`] : []),
      HARDHAT_CLI,
      "--config",
      HARDHAT_CONFIG,
      "node",
      "--hostname",
      "127.0.0.1",
      "--port",
      String(options.port),
    ],
    {
      cwd: dirname(HARDHAT_CONFIG),
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        HARDHAT_DISABLE_TELEMETRY_PROMPT: "true",
        HUMANPASS_DEVNET_PARENT_PID: String(process.pid),
        HUMANPASS_DEVNET_KEYS: options.privateKeys.join(","),
      },
    },
  );
  running.add(child);
  const exited = new Promise<void>((resolve) =>
    child.once("exit", () => {
      running.delete(child);
      resolve();
    }),
  );

  let stdout = "";
  let stderr = "";
  const rpcUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => fail(`did not start within ${options.startTimeoutMs} ms`),
      options.startTimeoutMs,
    );
    function fail(reason: string) {
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(new Error(`hardhat node ${reason}\n${stderr.slice(-2000) || stdout.slice(-2000)}`));
    }
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-8000);
    });
    child.stdout!.on("data", function onData(chunk: Buffer) {
      stdout += chunk.toString();
      const match = READY_LINE.exec(stdout);
      if (!match) return;
      clearTimeout(timer);
      // Keep draining stdout so the node never blocks on a full pipe.
      child.stdout!.off("data", onData);
      child.stdout!.resume();
      resolve(match[1]!);
    });
    exited.then(() => fail(`exited early (code ${child.exitCode}, signal ${child.signalCode})`));
  });

  return {
    rpcUrl,
    pid: child.pid!,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
      await exited;
      clearTimeout(timer);
    },
  };
}
