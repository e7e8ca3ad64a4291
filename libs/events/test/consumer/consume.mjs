// A subscriber's backend as plain Node would run it: its own NATS connection, @humanpass/events from the tarball.
import { replaySince, subscribe } from "@humanpass/events";
import { connect } from "@nats-io/transport-node";

const nc = await connect({ servers: process.env.NATS_URL });
const topology = { prefix: process.env.EVENTS_PREFIX };
const expected = Number(process.env.EXPECTED_OUTCOMES);
const handled = [];
const deadLetters = [];
let finish;
const finished = new Promise((resolve) => {
  finish = resolve;
});
const settled = () => {
  if (handled.length + deadLetters.length >= expected) finish();
};

const subscription = await subscribe(nc, {
  stream: "AGENT_AUTH",
  type: "human_verified",
  durable: "acme_agent-auth",
  topology,
  maxDeliveries: 3,
  backoffMs: [20, 40],
  async handler(event, delivery) {
    if (event.data.resource === "https://acme.example/refused") throw new Error("refused by the handler");
    if (event.data.resource === "https://acme.example/flaky" && delivery.attempt === 1)
      throw new Error("flaky");
    handled.push({ id: event.id, humanId: event.data.humanId, attempt: delivery.attempt });
    settled();
  },
  async deadLetter(letter) {
    deadLetters.push({ id: JSON.parse(letter.payload).id, attempts: letter.attempts, error: letter.error });
    settled();
  },
});
await finished;
await subscription.stop();

const replayed = [];
const count = await replaySince(nc, {
  stream: "AGENT_AUTH",
  type: "human_verified",
  since: new Date(Number(process.env.SINCE_MS)),
  consumer: "acme_replay",
  topology,
  async handler(event) {
    replayed.push(event.id);
  },
});
process.stdout.write(`${JSON.stringify({ handled, deadLetters, replayed, count })}\n`);
await nc.close();
