import { STREAMS, type StreamName } from "@humanpass/events";

/** What a stream keeps: messages older than `maxAgeMs` or beyond `maxBytes` are removed, oldest first. */
export interface StreamLimits {
  /** 0: no age limit. */
  maxAgeMs: number;
  /** -1: no size limit. */
  maxBytes: number;
}

export type RetentionTarget = StreamName | "DEAD_LETTERS";

export type Retention = Record<RetentionTarget, StreamLimits>;

const DAY_MS = 86_400_000;
const GIB = 1024 ** 3;

/**
 * Defaults sized for the base NATS file store (8 GB per server, every stream on every server at R3): 4 × 1 GiB of
 * events + 256 MiB of dead letters = 4.25 GiB, room left for the raft logs and a compaction. docs/deploy.md,
 * "JetStream retention", has the arithmetic.
 */
export const DEFAULT_RETENTION: Retention = {
  VERIFIER: { maxAgeMs: 180 * DAY_MS, maxBytes: GIB },
  CHAIN: { maxAgeMs: 180 * DAY_MS, maxBytes: GIB },
  AGENT_AUTH: { maxAgeMs: 180 * DAY_MS, maxBytes: GIB },
  PAYMENTS: { maxAgeMs: 180 * DAY_MS, maxBytes: GIB },
  DEAD_LETTERS: { maxAgeMs: 30 * DAY_MS, maxBytes: GIB / 4 },
};

export const RETENTION_TARGETS = [...(Object.keys(STREAMS) as StreamName[]), "DEAD_LETTERS"] as const;

export class RetentionConfigError extends Error {
  override name = "RetentionConfigError";
}

const DURATION_UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: DAY_MS };
const SIZE_UNITS: Record<string, number> = { B: 1, KiB: 1024, MiB: 1024 ** 2, GiB: GIB, TiB: 1024 ** 4 };

/** `30d`, `12h`, `90m`, `3600s`; `0` for no age limit. */
export function parseDuration(value: string): number | undefined {
  if (value.trim() === "0") return 0;
  const m = /^\s*([1-9][0-9]*)\s*([smhd])\s*$/.exec(value);
  return m ? Number(m[1]) * DURATION_UNITS[m[2]!]! : undefined;
}

/** `1GiB`, `512MiB`, `1048576` (bytes); `-1` for no size limit. */
export function parseSize(value: string): number | undefined {
  if (value.trim() === "-1") return -1;
  const m = /^\s*([1-9][0-9]*)\s*(B|KiB|MiB|GiB|TiB)?\s*$/.exec(value);
  return m ? Number(m[1]) * SIZE_UNITS[m[2] ?? "B"]! : undefined;
}

/** The variables that set a stream's limits, e.g. JETSTREAM_CHAIN_MAX_AGE and JETSTREAM_CHAIN_MAX_BYTES. */
export function retentionVariables(target: RetentionTarget): { maxAge: string; maxBytes: string } {
  return { maxAge: `JETSTREAM_${target}_MAX_AGE`, maxBytes: `JETSTREAM_${target}_MAX_BYTES` };
}

/**
 * The retention the topology step applies: DEFAULT_RETENTION, with each stream's JETSTREAM_<STREAM>_MAX_AGE and
 * JETSTREAM_<STREAM>_MAX_BYTES where set. A malformed value is an error naming the variable, never a default.
 */
export function retentionFromEnv(env: Record<string, string | undefined>): Retention {
  const out = { ...DEFAULT_RETENTION };
  for (const target of RETENTION_TARGETS) {
    const names = retentionVariables(target);
    const limits = { ...out[target] };
    const age = env[names.maxAge];
    if (age !== undefined && age !== "") {
      const ms = parseDuration(age);
      if (ms === undefined)
        throw new RetentionConfigError(
          `${names.maxAge}: "${age}" is not a duration (e.g. 30d, 12h, 90m, 3600s; 0 for no age limit)`,
        );
      limits.maxAgeMs = ms;
    }
    const bytes = env[names.maxBytes];
    if (bytes !== undefined && bytes !== "") {
      const n = parseSize(bytes);
      if (n === undefined)
        throw new RetentionConfigError(
          `${names.maxBytes}: "${bytes}" is not a size (e.g. 1GiB, 512MiB, 1048576; -1 for no size limit)`,
        );
      limits.maxBytes = n;
    }
    out[target] = limits;
  }
  return out;
}
