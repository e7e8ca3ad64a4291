import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { REPO_ROOT } from "../processes";

const run = promisify(execFile);

/** One container of a compose project: its service, replica number and address on the project's network. */
export interface Replica {
  service: string;
  number: number;
  id: string;
  ip: string;
}

/** The compose command (COMPOSE_CMD, "docker compose" or "docker-compose") for one project. */
export function composeOf(project: string) {
  const [cmd, ...base] = (process.env.COMPOSE_CMD || "docker-compose").split(" ");
  /** `env`: the environment compose reads the file's variables from. */
  const compose = async (args: string[], env: NodeJS.ProcessEnv = process.env) =>
    (await run(cmd!, [...base, "-p", project, ...args], { cwd: REPO_ROOT, env, maxBuffer: 64 << 20 })).stdout;
  const replicas = () => replicasOf(project);
  return {
    compose,
    replicas,
    /** Container ids of a service's replicas, stopped ones too, oldest replica first. */
    async containers(service: string): Promise<string[]> {
      return (await replicas()).filter((r) => r.service === service).map((r) => r.id);
    },
  };
}

/**
 * Every container of the project (not one-off runs), ordered by service and replica number. Read from the compose
 * labels with two calls of the docker CLI rather than `compose ps`: the readiness poll calls this every 250 ms while
 * services restart, and the Python compose v1 costs a third of a CPU second per call on a 2-core host.
 */
async function replicasOf(project: string): Promise<Replica[]> {
  const ids = (
    await docker(
      "ps",
      "-aq",
      "--filter",
      `label=com.docker.compose.project=${project}`,
      "--filter",
      "label=com.docker.compose.oneoff=False",
    )
  )
    .split("\n")
    .filter(Boolean);
  if (ids.length === 0) return [];
  const format =
    '{{.Id}} {{index .Config.Labels "com.docker.compose.service"}} {{index .Config.Labels "com.docker.compose.container-number"}} {{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}';
  return (await docker("inspect", "-f", format, ...ids))
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [id = "", service = "", number = "", ip = ""] = line.trim().split(" ");
      return { id, service, number: Number(number), ip };
    })
    .sort((a, b) => a.service.localeCompare(b.service) || a.number - b.number);
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
