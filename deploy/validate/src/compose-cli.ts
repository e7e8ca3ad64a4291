import { spawnSync } from "node:child_process";
import path from "node:path";
import { parse } from "yaml";
import type { Problem } from "./problems.ts";

export type ComposeConfig =
  | {
      /** The compose command that read the files, e.g. `docker compose` or `docker-compose`. */
      command: string;
      problems: Problem[];
      /** The files as compose resolves them: merged, variables interpolated, `environment` as a map. */
      resolved?: Record<string, any>;
    }
  | {
      /** Why compose did not read the files (no compose command on PATH). */
      notRun: string;
    };

/** Why the compose binary's own check cannot run here. */
export const NO_COMPOSE_COMMAND =
  "no compose command on PATH (neither the docker compose plugin nor docker-compose)";

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
 * Has compose itself read the files (`-f` each, in order), where a compose command exists: `config` rejects what its
 * own schema forbids, a `depends_on` on a service that does not exist and a named volume no top-level `volumes`
 * declares, and prints the resolved model. `compose.ts` checks the same in-process, everywhere; this is the second
 * opinion of the tool that runs the files.
 */
export function composeConfig(
  files: string[],
  where = files.map((f) => path.basename(f)).join(" + "),
): ComposeConfig {
  const command = composeCommand();
  if (!command) return { notRun: NO_COMPOSE_COMMAND };
  const result = spawnSync(
    command[0]!,
    [
      ...command.slice(1),
      ...files.flatMap((f) => ["-f", f]),
      "--project-directory",
      path.dirname(files[0]!),
      "config",
    ],
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
