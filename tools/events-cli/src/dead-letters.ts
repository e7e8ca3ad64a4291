import {
  ForgedDeadLetterError,
  listDeadLetters,
  replayDeadLetter,
  type StoredDeadLetter,
} from "@humanpass/event-bus";
import { connect } from "@nats-io/transport-node";
import { natsCredentials, parseConnectionArgs, UsageError } from "./args.ts";

export interface DeadLettersOptions {
  replay: false | "all" | number[];
  consumer?: string;
  json: boolean;
  prefix: string;
  servers: string;
}

/** `dead-letters [replay (<seq>… | --all)] [--consumer c] [--json] [--prefix p] [--server url]` */
export function parseDeadLettersArgs(
  argv: string[],
  env: Record<string, string | undefined> = process.env,
): DeadLettersOptions {
  const rest = [...argv];
  const replaying = rest[0] === "replay";
  if (replaying) rest.shift();
  const seqs: number[] = [];
  let all = false;
  let json = false;
  let consumer: string | undefined;
  const connection = parseConnectionArgs(rest, env, (flag, take) => {
    if (flag === "--json") json = true;
    else if (flag === "--all") all = true;
    else if (flag === "--consumer") consumer = take();
    else if (replaying && /^[1-9][0-9]*$/.test(flag)) seqs.push(Number(flag));
    else return false;
    return true;
  });
  if (replaying && all === seqs.length > 0)
    throw new UsageError("dead-letters replay: give the sequence numbers to replay, or --all");
  if (!replaying && all) throw new UsageError("--all is for `dead-letters replay`");
  return { ...connection, replay: replaying ? (all ? "all" : seqs) : false, consumer, json };
}

function describe(letter: StoredDeadLetter): string {
  const event = letter.event as { id?: string; type?: string } | undefined;
  return [
    `#${letter.seq}  ${letter.deadLetteredAt}  ${letter.consumer}  ${letter.subject} (stream seq ${letter.streamSeq})`,
    `    event     ${event?.id ?? "(not a CloudEvent)"}`,
    `    attempts  ${letter.attempts}`,
    `    error     ${letter.error}`,
  ].join("\n");
}

/** Lists the dead letters, or replays some; returns the exit code. */
export async function deadLetters(
  options: DeadLettersOptions,
  io: { out: (line: string) => void; err: (line: string) => void },
): Promise<number> {
  const nc = await connect({
    servers: options.servers.split(","),
    name: "humanpass-events-dead-letters",
    ...natsCredentials(),
  });
  try {
    const topology = { prefix: options.prefix };
    const letters = await listDeadLetters(nc, topology, { consumer: options.consumer });
    if (options.replay === false) {
      for (const letter of letters) io.out(options.json ? JSON.stringify(letter) : describe(letter));
      io.err(`${letters.length} dead letter(s)`);
      return 0;
    }
    const wanted = options.replay;
    const chosen = wanted === "all" ? letters : letters.filter((l) => wanted.includes(l.seq));
    if (wanted !== "all") {
      const missing = wanted.filter((seq) => !chosen.some((l) => l.seq === seq));
      if (missing.length > 0) {
        io.err(`no dead letter #${missing.join(", #")}${options.consumer ? ` of ${options.consumer}` : ""}`);
        return 1;
      }
    }
    let refused = 0;
    for (const letter of chosen) {
      try {
        await replayDeadLetter(nc, topology, letter);
      } catch (e) {
        if (!(e instanceof ForgedDeadLetterError)) throw e;
        refused++;
        io.err(e.message);
        continue;
      }
      io.out(`replayed #${letter.seq} to ${letter.subject}`);
    }
    io.err(
      `${chosen.length - refused} dead letter(s) replayed${refused ? `, ${refused} refused and kept` : ""}`,
    );
    return refused > 0 ? 1 : 0;
  } finally {
    await nc.close();
  }
}
