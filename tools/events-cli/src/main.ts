import { parseTailArgs, USAGE, UsageError } from "./args.ts";
import { deadLetters, parseDeadLettersArgs } from "./dead-letters.ts";
import { NATS_USAGE, parseNatsArgs, runNats } from "./nats.ts";
import { tail } from "./tail.ts";

/** `humanpass <group> <command> …`; returns the process exit code. */
export async function main(argv: string[]): Promise<number> {
  const [group, command, ...rest] = argv;
  if (
    group === undefined ||
    group === "-h" ||
    group === "--help" ||
    rest.includes("--help") ||
    rest.includes("-h")
  ) {
    process.stdout.write(group === "nats" ? NATS_USAGE : `${USAGE}\n${NATS_USAGE}`);
    return group === undefined ? 2 : 0;
  }
  if (group === "nats") {
    if (command === undefined || command === "-h" || command === "--help") {
      process.stdout.write(NATS_USAGE);
      return command === undefined ? 2 : 0;
    }
    try {
      return await runNats(parseNatsArgs(command, rest), {
        out: (text) => process.stdout.write(text),
        err: (line) => process.stderr.write(`${line}\n`),
      });
    } catch (e) {
      if (e instanceof UsageError) {
        process.stderr.write(`${e.message}\n\n${NATS_USAGE}`);
        return 2;
      }
      process.stderr.write(`humanpass nats ${command}: ${(e as Error).message}\n`);
      return 1;
    }
  }
  if (group !== "events" || (command !== "tail" && command !== "dead-letters")) {
    process.stderr.write(`unknown command: ${[group, command].filter(Boolean).join(" ")}\n\n${USAGE}`);
    return 2;
  }
  const io = {
    out: (line: string) => process.stdout.write(`${line}\n`),
    err: (line: string) => process.stderr.write(`${line}\n`),
  };
  try {
    if (command === "dead-letters") return await deadLetters(parseDeadLettersArgs(rest), io);
    const options = parseTailArgs(rest);
    const stop = new AbortController();
    for (const sig of ["SIGINT", "SIGTERM"] as const) process.once(sig, () => stop.abort());
    // `humanpass events tail | head` closes the pipe: that is the reader being done, not an error.
    for (const stream of [process.stdout, process.stderr]) {
      stream.on("error", (e: NodeJS.ErrnoException) => {
        if (e.code === "EPIPE") stop.abort();
      });
    }
    return await tail(options, { ...io, color: process.stdout.isTTY === true }, stop.signal);
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`${e.message}\n\n${USAGE}`);
      return 2;
    }
    process.stderr.write(`humanpass events ${command}: ${(e as Error).message}\n`);
    return 1;
  }
}
