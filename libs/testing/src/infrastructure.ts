import { execFileSync } from "node:child_process";
import net from "node:net";

export const DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/postgres";
export const DEFAULT_NATS_URL = "nats://127.0.0.1:4222";

export function canConnect(url: string, timeoutMs = 1_000): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname, port: Number(port) }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.setTimeout(timeoutMs, () => {
      socket.destroy();
      resolve(false);
    });
    socket.on("error", () => resolve(false));
  });
}

function dockerAvailable(): boolean {
  try {
    execFileSync("docker", ["info"], { stdio: "ignore", timeout: 5_000 });
    return true;
  } catch {
    return false;
  }
}

/**
 * Postgres and NATS for tests: the URLs from the environment, else the local defaults when they answer,
 * else containers when a Docker engine runs. Never a mock.
 */
export async function resolveInfrastructure(): Promise<{
  databaseUrl: string;
  natsUrl: string;
  stop?: () => Promise<void>;
}> {
  let databaseUrl = process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL;
  let natsUrl = process.env.NATS_URL ?? DEFAULT_NATS_URL;
  const stops: (() => Promise<void>)[] = [];
  const pgUp = await canConnect(databaseUrl);
  const natsUp = await canConnect(natsUrl);
  if ((!pgUp || !natsUp) && dockerAvailable()) {
    const { GenericContainer, Wait } = await import("testcontainers");
    if (!pgUp) {
      const c = await new GenericContainer("postgres:16-alpine")
        .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: "trust" })
        .withExposedPorts(5432)
        .withWaitStrategy(Wait.forLogMessage(/ready to accept connections/, 2))
        .start();
      databaseUrl = `postgres://postgres@${c.getHost()}:${c.getMappedPort(5432)}/postgres`;
      stops.push(async () => void (await c.stop()));
    }
    if (!natsUp) {
      const c = await new GenericContainer("nats:2.10-alpine")
        .withCommand(["-js"])
        .withExposedPorts(4222)
        .start();
      natsUrl = `nats://${c.getHost()}:${c.getMappedPort(4222)}`;
      stops.push(async () => void (await c.stop()));
    }
  } else if (!pgUp || !natsUp) {
    throw new Error(
      [
        !pgUp && `Postgres does not answer at ${databaseUrl}`,
        !natsUp && `NATS does not answer at ${natsUrl}`,
        "Run `make infra` (starts local Postgres/NATS), set DATABASE_URL / NATS_URL, or start a Docker engine.",
      ]
        .filter(Boolean)
        .join("; "),
    );
  }
  return { databaseUrl, natsUrl, stop: async () => void (await Promise.all(stops.map((s) => s()))) };
}
