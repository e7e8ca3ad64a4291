/** The gateway as it runs in production: `src/main.ts` in its own Node process, configured by environment. */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import path from "node:path";
import { eventually, freePort, REPO_ROOT, testNatsUrl } from "@humanpass/testing";

export interface GatewayProcess {
  url: string;
  output(): string;
  stop(): Promise<void>;
}

export function runMain(env: Record<string, string>): ChildProcess {
  return spawn(
    process.execPath,
    ["--conditions=@humanpass/source", path.join(REPO_ROOT, "services/payment-gateway/src/main.ts")],
    {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", LOG_LEVEL: "warn", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
}

export async function startGatewayProcess(env: Record<string, string>): Promise<GatewayProcess> {
  const port = await freePort();
  const child = runMain({
    NATS_URL: testNatsUrl(),
    HOST: "127.0.0.1",
    PORT: String(port),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    RATE_LIMIT_ENABLED: "false",
    NODE_ENV: "test",
    // No load balancer to leave: stopping does not wait out a drain.
    SHUTDOWN_DRAIN_MS: "0",
    ...env,
  });
  let output = "";
  child.stdout?.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    output += chunk;
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await eventually(
      async () => {
        if (child.exitCode !== null) throw new Error(`gateway exited with ${child.exitCode}: ${output}`);
        return (await fetch(`${url}/readyz`)).ok;
      },
      60_000,
      200,
    );
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
  return {
    url,
    output: () => output,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill("SIGTERM");
      await once(child, "exit");
    },
  };
}
