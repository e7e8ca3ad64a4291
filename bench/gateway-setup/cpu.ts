// CPU per process from /proc, for the benches that split a request's cost by process (the gateway's, the peers').
import { existsSync, readdirSync, readFileSync } from "node:fs";

/** CPU time (user + system, ms) of one process from /proc; 0 where there is none (not Linux). */
export function processCpuMs(pid: number | string | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return 0;
  }
}

/** CPU time per process id of every process whose command name is `name` and whose command line has `filter`. */
export function namedCpuMs(name: string, filter = ""): Map<string, number> {
  const cpu = new Map<string, number>();
  for (const pid of existsSync("/proc") ? readdirSync("/proc") : []) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/comm`, "utf8").trim() !== name) continue;
      if (filter && !readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(filter)) continue;
      cpu.set(pid, processCpuMs(pid));
    } catch {}
  }
  return cpu;
}

/** Each part's CPU by process id, at one moment. */
export type CpuReading<K extends string> = Record<K, Map<string, number>>;

/** CPU spent between two readings: a process that ended in between takes its time along, a new one counts whole. */
export function cpuBetween<K extends string>(before: CpuReading<K>, after: CpuReading<K>): Record<K, number> {
  const spent = (k: K) => [...after[k]].reduce((sum, [pid, ms]) => sum + ms - (before[k].get(pid) ?? 0), 0);
  return Object.fromEntries(Object.keys(after).map((k) => [k, spent(k as K)])) as Record<K, number>;
}
