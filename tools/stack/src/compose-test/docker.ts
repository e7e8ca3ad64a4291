import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { REPO_ROOT } from "../processes";

const run = promisify(execFile);

/** The compose command (COMPOSE_CMD, "docker compose" or "docker-compose") for one project. */
export function composeOf(project: string) {
  const [cmd, ...base] = (process.env.COMPOSE_CMD || "docker-compose").split(" ");
  /** `env`: the environment compose reads the file's variables from. */
  const compose = async (args: string[], env: NodeJS.ProcessEnv = process.env) =>
    (await run(cmd!, [...base, "-p", project, ...args], { cwd: REPO_ROOT, env, maxBuffer: 64 << 20 })).stdout;
  return {
    compose,
    /** Container ids of a service's replicas, oldest replica first. */
    async containers(service: string): Promise<string[]> {
      const ids = (await compose(["ps", "-q", service])).split("\n").filter(Boolean);
      if (ids.length === 0) return [];
      const inspected = await docker("inspect", "-f", "{{.Name}} {{.Id}}", ...ids);
      return inspected
        .split("\n")
        .filter(Boolean)
        .map((l) => l.split(" ") as [string, string])
        .sort(([a], [b]) => a.localeCompare(b, undefined, { numeric: true }))
        .map(([, id]) => id);
    },
  };
}

export async function docker(...args: string[]): Promise<string> {
  return (await run("docker", args, { maxBuffer: 64 << 20 })).stdout;
}

/** Docker's health status of each container ("healthy", "starting", "unhealthy", or "" without a health check). */
export async function health(ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const out = await docker("inspect", "-f", "{{if .State.Health}}{{.State.Health.Status}}{{end}}", ...ids);
  return out.split("\n").slice(0, ids.length);
}
