import { execFile } from "node:child_process";
import {
  appendFileSync,
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { freePort } from "./ports.ts";

const run = promisify(execFile);

/** The installed Postgres server binaries: on PATH, else Debian's layout (newest major first). */
function pgBin(name: string): string {
  const dirs = [
    ...(process.env.PATH ?? "").split(path.delimiter),
    ...(existsSync("/usr/lib/postgresql")
      ? readdirSync("/usr/lib/postgresql")
          .sort((a, b) => Number(b) - Number(a))
          .map((v) => `/usr/lib/postgresql/${v}/bin`)
      : []),
  ];
  const found = dirs.map((d) => path.join(d, name)).find((p) => existsSync(p));
  if (!found)
    throw new Error(
      `${name} not found: install the PostgreSQL server binaries (initdb, pg_ctl, pg_basebackup)`,
    );
  return found;
}

// initdb and postgres refuse to run as root; as root (CI), the instances belong to the `postgres` user.
const asRoot = process.getuid?.() === 0;

/** Runs one of the Postgres server programs (initdb, pg_ctl, pg_basebackup…) as the user that owns the data. */
export function runPostgresProgram(name: string, args: string[]): Promise<{ stdout: string }> {
  return asRoot ? run("runuser", ["-u", "postgres", "--", pgBin(name), ...args]) : run(pgBin(name), args);
}

/** One Postgres server of the test's own, on a free 127.0.0.1 port, trust authentication, user postgres. */
export interface OwnPostgres {
  data: string;
  port: number;
  url: string;
  start(): Promise<void>;
  /** SIGKILL to the postmaster: what the loss of the node does to it. */
  kill(): void;
}

/**
 * A folder for the test's instances (their data directories, logs, sockets, a WAL archive), writable by the user
 * the servers run as; `remove` stops every instance left running in it and deletes it.
 */
export class PostgresWorkDir {
  readonly dir: string;

  private readonly instances: OwnPostgres[] = [];

  private constructor(dir: string) {
    this.dir = dir;
  }

  static async create(label: string): Promise<PostgresWorkDir> {
    const dir = mkdtempSync(path.join(tmpdir(), `${label}-`));
    chmodSync(dir, 0o755);
    if (asRoot) chownSync(dir, await postgresUid(), -1);
    return new PostgresWorkDir(dir);
  }

  /** A subfolder the servers can write to (a WAL archive). */
  async folder(name: string): Promise<string> {
    const folder = path.join(this.dir, name);
    mkdirSync(folder);
    if (asRoot) chownSync(folder, await postgresUid(), -1);
    return folder;
  }

  /** A new cluster (initdb) with `settings` appended to its postgresql.conf, started. */
  async initdb(name: string, settings: string[] = []): Promise<OwnPostgres> {
    const instance = await this.instance(name);
    await runPostgresProgram("initdb", ["-D", instance.data, "-U", "postgres", "--auth=trust", "--no-sync"]);
    this.configure(instance, "postgresql.conf", settings);
    await instance.start();
    return instance;
  }

  /**
   * A copy of `source` taken by pg_basebackup (`wal`: `stream` takes the WAL with it, `none` leaves it to a
   * restore_command), with `settings` appended to its postgresql.auto.conf, and standby.signal when it is to run
   * as `source`'s standby; not started.
   */
  async basebackup(
    name: string,
    source: OwnPostgres,
    options: { wal: "stream" | "none"; settings: string[]; standby?: boolean },
  ): Promise<OwnPostgres> {
    const instance = await this.instance(name);
    await runPostgresProgram("pg_basebackup", [
      ...["-h", "127.0.0.1", "-p", String(source.port), "-U", "postgres"],
      ...["-D", instance.data, "-X", options.wal, "--checkpoint=fast", "--no-sync"],
    ]);
    this.configure(instance, "postgresql.auto.conf", options.settings);
    if (options.standby) await signal(instance, "standby");
    return instance;
  }

  /**
   * A fresh instance from a copy of `backup`'s data directory (a base backup taken by `basebackup`), `settings`
   * (a restore_command, a recovery target) appended to its postgresql.auto.conf and recovery.signal written; not
   * started.
   */
  async restore(name: string, backup: OwnPostgres, settings: string[]): Promise<OwnPostgres> {
    const instance = await this.instance(name);
    await run("cp", ["-a", backup.data, instance.data]);
    this.configure(instance, "postgresql.auto.conf", settings);
    await signal(instance, "recovery");
    return instance;
  }

  async remove(): Promise<void> {
    for (const instance of this.instances)
      if (existsSync(path.join(instance.data, "postmaster.pid")))
        await runPostgresProgram("pg_ctl", ["-D", instance.data, "-m", "immediate", "stop"]).catch(
          () => undefined,
        );
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async instance(name: string): Promise<OwnPostgres> {
    const data = path.join(this.dir, name);
    const port = await freePort();
    const log = path.join(this.dir, `${name}.log`);
    const instance: OwnPostgres = {
      data,
      port,
      url: `postgres://postgres@127.0.0.1:${port}/postgres`,
      start: async () => {
        await runPostgresProgram("pg_ctl", ["-D", data, "-l", log, "-w", "-t", "120", "start"]).catch((e) => {
          const tail = existsSync(log) ? readFileSync(log, "utf8").split("\n").slice(-15).join("\n") : "";
          throw new Error(`${name} did not start: ${(e as Error).message}\n${tail}`);
        });
      },
      kill: () => {
        const postmaster = Number(readFileSync(path.join(data, "postmaster.pid"), "utf8").split("\n")[0]);
        process.kill(postmaster, "SIGKILL");
      },
    };
    this.instances.push(instance);
    return instance;
  }

  private configure(instance: OwnPostgres, file: string, settings: string[]): void {
    appendFileSync(
      path.join(instance.data, file),
      [
        `port = ${instance.port}`,
        "listen_addresses = '127.0.0.1'",
        `unix_socket_directories = '${this.dir}'`,
        ...settings,
        "",
      ].join("\n"),
    );
  }
}

/** The file that starts an instance as a standby or in targeted recovery. */
async function signal(instance: OwnPostgres, kind: "standby" | "recovery"): Promise<void> {
  const file = path.join(instance.data, `${kind}.signal`);
  writeFileSync(file, "");
  if (asRoot) chownSync(file, await postgresUid(), -1);
}

async function postgresUid(): Promise<number> {
  const { stdout } = await run("id", ["-u", "postgres"]);
  return Number(stdout.trim());
}
