/**
 * Lists or replays the dead letters from inside the cluster, where `npx humanpass events dead-letters` (a tool of
 * the repository, in no image) cannot run: the humanpass-dead-letters CronJob runs it, never on a schedule, as the
 * `dead-letters` NATS user, in a service image (every one carries @humanpass/event-bus).
 *   node dead-letters.mjs                          list every dead letter (--consumer <durable>: only its own)
 *   node dead-letters.mjs replay <seq>… | --all    publish them to their subjects again, then remove them
 * Plain JavaScript, so plain `node` runs it.
 */
import { connectNats, listDeadLetters, replayDeadLetter } from "@humanpass/event-bus";

const args = process.argv.slice(2);
const replaying = args[0] === "replay";
if (replaying) args.shift();
const consumerAt = args.indexOf("--consumer");
const consumer = consumerAt >= 0 ? args.splice(consumerAt, 2)[1] : undefined;
const all = args.includes("--all");
const seqs = args.filter((a) => a !== "--all").map(Number);
if (
  (consumerAt >= 0 && !consumer) ||
  seqs.some((n) => !Number.isSafeInteger(n) || n < 1) ||
  (replaying ? all === seqs.length > 0 : all || seqs.length > 0)
) {
  process.stderr.write(
    "usage: dead-letters.mjs [--consumer <durable>] | replay (<seq>… | --all) [--consumer <durable>]\n",
  );
  process.exit(2);
}

// Connection events to stderr; stdout carries the dead letters alone.
const log = (level) => (fields, msg) =>
  process.stderr.write(`${JSON.stringify({ level, msg: msg ?? fields, ...(msg ? fields : {}) })}\n`);
const logger = { info: log("info"), warn: log("warn"), error: log("error") };
const nats = await connectNats(
  process.env.NATS_URL ?? "nats://127.0.0.1:4222",
  logger,
  "humanpass-dead-letters",
  {
    user: process.env.NATS_USER || undefined,
    pass: process.env.NATS_PASSWORD,
    tlsCaFile: process.env.NATS_TLS_CA || undefined,
  },
);
const topology = { prefix: process.env.EVENTS_PREFIX ?? "" };
let code = 0;
try {
  const letters = await listDeadLetters(nats, topology, { consumer });
  const chosen = !replaying ? [] : all ? letters : letters.filter((l) => seqs.includes(l.seq));
  if (!replaying) for (const letter of letters) process.stdout.write(`${JSON.stringify(letter)}\n`);
  for (const seq of seqs.filter((s) => !chosen.some((l) => l.seq === s))) {
    process.stderr.write(`no dead letter #${seq}${consumer ? ` of ${consumer}` : ""}\n`);
    code = 1;
  }
  for (const letter of chosen) {
    try {
      await replayDeadLetter(nats, topology, letter);
      process.stdout.write(`replayed #${letter.seq} to ${letter.subject}\n`);
    } catch (e) {
      // A forged or altered dead letter (or one whose event the stream no longer holds) is kept for a person.
      process.stderr.write(`${e.message}\n`);
      code = 1;
    }
  }
  process.stderr.write(
    replaying ? `${chosen.length} dead letter(s) chosen for replay\n` : `${letters.length} dead letter(s)\n`,
  );
} finally {
  await nats.close();
}
process.exit(code);
