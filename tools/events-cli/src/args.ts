export interface TailOptions {
  subjects: string[];
  /** Deliver from this instant; only new events when absent. */
  since?: Date;
  json: boolean;
  /** Exit after this many events. */
  count?: number;
  /** Subject/stream prefix of a non-default topology (EVENTS_PREFIX). */
  prefix: string;
  servers: string;
  /** NATS user; NATS_USER and NATS_PASSWORD when absent. */
  credentials?: { user: string; pass: string };
}

/**
 * NATS_USER and NATS_PASSWORD, for a server that requires them (the `operator` user of users.conf), and NATS_TLS_CA,
 * the CA of a server that speaks TLS (the prod overlay's), as connect options.
 */
export function natsCredentials(env: Record<string, string | undefined> = process.env): {
  user?: string;
  pass?: string;
  tls?: { caFile: string };
} {
  return {
    ...(env.NATS_USER ? { user: env.NATS_USER, pass: env.NATS_PASSWORD } : {}),
    ...(env.NATS_TLS_CA ? { tls: { caFile: env.NATS_TLS_CA } } : {}),
  };
}

export class UsageError extends Error {
  override name = "UsageError";
}

export const USAGE = `Usage: humanpass events tail [subject…] [options]
       humanpass events dead-letters [--consumer <durable>] [--json] [--prefix <p>] [--server <url>]
       humanpass events dead-letters replay (<seq>… | --all) [--consumer <durable>] [--prefix <p>] [--server <url>]

Prints humanpass events from NATS JetStream as they arrive. Without subjects, every humanpass stream
(VERIFIER, CHAIN, AGENT_AUTH, PAYMENTS) is followed. Subjects may use NATS wildcards:
  humanpass events tail chain.> payments.max_use_exceeded
  humanpass events tail '*.human_verified' --since 1h --json

Options:
  --since <when>   also print stored events from then on: a duration (30s, 10m, 2h, 1d) or an ISO 8601 time
  --json           one JSON object per line: { stream, seq, subject, event }
  --count <n>      exit after n events
  --prefix <p>     subject prefix of a test topology (default: $EVENTS_PREFIX or none)
  --server <url>   NATS server(s), comma-separated (default: $NATS_URL or nats://127.0.0.1:4222);
                   NATS_USER and NATS_PASSWORD when the server requires a user, NATS_TLS_CA (a PEM
                   file) when it speaks TLS
  -h, --help       this text

dead-letters lists the events a consumer could not apply (invalid, or refused by its handler too many times)
with the error and the attempts; replay publishes them to their subject again and removes them from the list,
only when the event stream still holds the very message (stream and sequence kept in the dead letter): a forged
or altered dead letter is refused, kept and named on stderr (exit code 1).
  --consumer <d>   only the dead letters of this durable consumer
  --all            replay every dead letter listed
`;

const DURATION = /^(\d+)(ms|s|m|h|d)$/;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `10m` means ten minutes before `now`; anything else must be an ISO 8601 date-time. */
export function parseSince(value: string, now: Date = new Date()): Date {
  const duration = DURATION.exec(value);
  if (duration) return new Date(now.getTime() - Number(duration[1]) * UNIT_MS[duration[2]]);
  if (/^\d{4}-\d{2}-\d{2}/.test(value)) {
    const at = new Date(value);
    if (!Number.isNaN(at.getTime())) return at;
  }
  throw new UsageError(`--since: "${value}" is neither a duration like 10m nor an ISO 8601 time`);
}

/**
 * Walks `argv` for the options every command shares (--prefix, --server); each other argument goes to `other`
 * with a `take` that reads its value (`--flag value` or `--flag=value`). `other` returns false for what it does
 * not know.
 */
export function parseConnectionArgs(
  argv: string[],
  env: Record<string, string | undefined>,
  other: (flag: string, take: () => string) => boolean,
): { prefix: string; servers: string } {
  const options = { prefix: env.EVENTS_PREFIX ?? "", servers: env.NATS_URL || "nats://127.0.0.1:4222" };
  const value = (i: number, flag: string): string => {
    const v = argv[i + 1];
    if (v === undefined || v.startsWith("--")) throw new UsageError(`${flag} needs a value`);
    return v;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const [flag, inline] =
      arg.startsWith("--") && arg.includes("=")
        ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)]
        : [arg, undefined];
    const take = () => inline ?? value(i++, flag);
    if (flag === "--prefix") options.prefix = take();
    else if (flag === "--server") options.servers = take();
    else if (!other(flag, take)) {
      if (flag.startsWith("-")) throw new UsageError(`unknown option ${flag}`);
      throw new UsageError(`unexpected argument "${flag}"`);
    }
  }
  if (options.prefix && !/^[a-z0-9_]+$/.test(options.prefix)) {
    throw new UsageError(`--prefix: "${options.prefix}" must be lower-case letters, digits and _`);
  }
  return options;
}

export function parseTailArgs(
  argv: string[],
  env: Record<string, string | undefined> = process.env,
  now = new Date(),
): TailOptions {
  const subjects: string[] = [];
  let json = false;
  let since: Date | undefined;
  let count: number | undefined;
  const connection = parseConnectionArgs(argv, env, (flag, take) => {
    switch (flag) {
      case "--json":
        json = true;
        return true;
      case "--since":
        since = parseSince(take(), now);
        return true;
      case "--count": {
        const raw = take();
        const n = Number(raw);
        if (!Number.isInteger(n) || n < 1)
          throw new UsageError(`--count: "${raw}" is not a positive integer`);
        count = n;
        return true;
      }
      default:
        if (flag.startsWith("-")) return false;
        if (!/^[^\s]+$/.test(flag)) throw new UsageError(`"${flag}" is not a NATS subject`);
        subjects.push(flag);
        return true;
    }
  });
  return {
    subjects,
    json,
    ...(since ? { since } : {}),
    ...(count !== undefined ? { count } : {}),
    ...connection,
  };
}
