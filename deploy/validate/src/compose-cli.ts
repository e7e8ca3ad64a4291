import { spawnSync } from "node:child_process";
import path from "node:path";
import { parse } from "yaml";
import type { Problem } from "./problems.ts";

export interface ComposeConfig {
  /** The compose command that read the file, e.g. `docker compose` or `docker-compose`; undefined when none exists. */
  command?: string;
  problems: Problem[];
  /** The file as compose resolves it: merge keys applied, variables interpolated, `environment` as a map. */
  resolved?: Record<string, any>;
}

/** Only PATH and HOME: variables exported in the caller's shell (make exports some) must not change the result. */
const cleanEnv = () => ({ PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp" });

/** `docker compose` (v2) where the plugin exists, else Debian's `docker-compose` (1.29), else none. */
export function composeCommand(): string[] | undefined {
  for (const command of [["docker", "compose"], ["docker-compose"]]) {
    const probe = spawnSync(command[0]!, [...command.slice(1), "version"], {
      env: cleanEnv(),
      stdio: "ignore",
    });
    if (probe.status === 0) return command;
  }
  return undefined;
}

/**
 * Has compose itself read the file: `config` rejects what its own schema forbids, a `depends_on` on a service that
 * does not exist and a named volume no top-level `volumes` declares, and prints the resolved model.
 */
export function composeConfig(file: string, where = path.basename(file)): ComposeConfig {
  const command = composeCommand();
  if (!command)
    return {
      problems: [
        {
          where,
          path: "/",
          message: "no compose command to check it with: install docker-compose or the docker compose plugin",
        },
      ],
    };
  const result = spawnSync(
    command[0]!,
    [...command.slice(1), "-f", file, "--project-directory", path.dirname(file), "config"],
    { env: cleanEnv(), encoding: "utf8", timeout: 60_000 },
  );
  const name = command.join(" ");
  if (result.status !== 0) {
    const lines = `${result.stderr ?? ""}${result.error ? `\n${result.error.message}` : ""}`
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line && !/is invalid because:$/.test(line));
    return {
      command: name,
      problems: (lines.length ? lines : [`exited with ${result.status}`]).map((line) => ({
        where,
        path: "/",
        message: `${name} config: ${line}`,
      })),
    };
  }
  return { command: name, problems: [], resolved: parse(result.stdout) };
}
