/** The gateway as it runs in production: `src/main.ts` in its own Node process, configured by environment. */
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { freePort, REPO_ROOT, type ServiceProcess, startServiceMain } from "@humanpass/testing";

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

/** The gateway's main.ts as a test runs it (see `startServiceMain`), with only PATH and HOME of this process's environment. */
export async function startGatewayProcess(env: Record<string, string>): Promise<ServiceProcess> {
  const port = String(await freePort());
  return startServiceMain(
    "payment-gateway",
    {
      PORT: port,
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      RATE_LIMIT_ENABLED: "false",
      NODE_ENV: "test",
      LOG_LEVEL: "warn",
      ...env,
    },
    { baseEnv: "minimal" },
  );
}
