// The containers of a compose project, through the Docker Engine API (dockerode on the default socket, or
// DOCKER_HOST): compose labels every container it creates with its project, service and replica number, so no
// compose command is needed to find or drive them.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { REPO_ROOT } from "@humanpass/testing/service-process";
import Docker from "dockerode";

export const docker = new Docker();

/** One container of a compose project: its service, replica number and address on the project's network. */
export interface Replica {
  service: string;
  number: number;
  id: string;
  ip: string;
}

/** Every container of the project (not one-off runs), ordered by service and replica number: one API call. */
export async function replicasOf(project: string): Promise<Replica[]> {
  const containers = await docker.listContainers({
    all: true,
    filters: { label: [`com.docker.compose.project=${project}`, "com.docker.compose.oneoff=False"] },
  });
  return containers
    .map((c) => ({
      id: c.Id,
      service: c.Labels["com.docker.compose.service"] ?? "",
      number: Number(c.Labels["com.docker.compose.container-number"]),
      ip: Object.values(c.NetworkSettings.Networks).find((n) => n.IPAddress)?.IPAddress ?? "",
    }))
    .sort((a, b) => a.service.localeCompare(b.service) || a.number - b.number);
}

/** Container ids of a service's replicas, stopped ones too, oldest replica first. */
export async function containersOf(project: string, service: string): Promise<string[]> {
  return (await replicasOf(project)).filter((r) => r.service === service).map((r) => r.id);
}

/** What a service's first container has logged so far, stdout and stderr as one text. */
export async function logsOf(project: string, service: string): Promise<string> {
  const [id] = await containersOf(project, service);
  if (!id) return "";
  const container = docker.getContainer(id);
  const { Config } = await container.inspect();
  const raw = await container.logs({ stdout: true, stderr: true, follow: false });
  return Config.Tty ? raw.toString("utf8") : demultiplex(raw);
}

/**
 * The Engine API frames a container's output without a TTY: an 8-byte header (stream, 3 zero bytes, the length as
 * a big-endian uint32) before each chunk. docker-modem's demuxStream does this for streams, not for a buffer.
 */
function demultiplex(raw: Buffer): string {
  const chunks: Buffer[] = [];
  for (let at = 0; at + 8 <= raw.length; ) {
    const length = raw.readUInt32BE(at + 4);
    chunks.push(raw.subarray(at + 8, at + 8 + length));
    at += 8 + length;
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * The compose command itself (COMPOSE_CMD, "docker compose" or "docker-compose") for one project, for what only
 * compose does: scaling a service up and down. `env`: the environment compose reads the file's variables from.
 */
export function composeCli(project: string) {
  const [cmd, ...base] = (process.env.COMPOSE_CMD || "docker-compose").split(" ");
  return async (args: string[], env: NodeJS.ProcessEnv = process.env) =>
    (
      await promisify(execFile)(cmd!, [...base, "-p", project, ...args], {
        cwd: REPO_ROOT,
        env,
        maxBuffer: 64 << 20,
      })
    ).stdout;
}
