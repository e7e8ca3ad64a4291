import { inject } from "vitest";
import { freePort } from "./ports.ts";
import { type ServiceProcess, type ServiceProcessOptions, startServiceProcess } from "./service-process.ts";

/**
 * A service's `src/main.ts` in its own process, configured as a test runs it: the test NATS server, loopback, a
 * free port unless `env.PORT` names one, and no drain on SIGTERM (there is no load balancer to leave); `env`
 * overrides these. Resolves once /readyz answers 200.
 */
export async function startServiceMain(
  service: string,
  env: Record<string, string>,
  options: Pick<ServiceProcessOptions, "baseEnv" | "log"> = {},
): Promise<ServiceProcess> {
  const port = env.PORT ?? String(await freePort());
  return startServiceProcess({
    name: service,
    entry: `services/${service}/src/main.ts`,
    url: `http://127.0.0.1:${port}`,
    env: {
      NATS_URL: inject("natsUrl"),
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "warn",
      HOST: "127.0.0.1",
      SHUTDOWN_DRAIN_MS: "0",
      ...env,
      PORT: port,
    },
    ...options,
  });
}
