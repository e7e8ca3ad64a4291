// What losing a NATS node costs a publisher on a 3-node JetStream cluster (the machine's nats-server, three processes
// on loopback ports), the stream at 3 replicas: the node leading the stream, then the meta leader, SIGKILLed in turn,
// ROUNDS times. Prints, per kill, the seconds from the kill until a JetStream publish is acknowledged again (the
// publish stall), the seconds from the kill until a durable pull consumer (consumed as the services' consumers are,
// `CONSUME_EXPIRES_MS`) receives a message published after it (the consume stall), and the seconds from the node's
// restart until both of its peers are current on the stream. Every third kill is of the consumer's leader.
// BENCH_CONSUME_EXPIRES_MS consumes with another pull expiry, to compare.

import { CONSUME_EXPIRES_MS } from "@humanpass/event-bus";
import { sleep } from "@humanpass/retry";
import { startNatsCluster } from "@humanpass/testing";
import { AckPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);

const cluster = await startNatsCluster(3);
const nc = await connect({
  servers: cluster.servers.split(","),
  maxReconnectAttempts: -1,
  reconnectTimeWait: 250,
});
const jsm = await jetstreamManager(nc);
await jsm.streams.add({ name: "FAILOVER", subjects: ["failover.>"], num_replicas: 3 });
const js = jetstream(nc);
let id = 0;

await jsm.consumers.add("FAILOVER", { durable_name: "bench", ack_policy: AckPolicy.Explicit });
const expires = Number(process.env.BENCH_CONSUME_EXPIRES_MS ?? CONSUME_EXPIRES_MS);
let received = 0;
let receivedAt = 0;
const messages = await (await js.consumers.get("FAILOVER", "bench")).consume({ expires });
void (async () => {
  for await (const msg of messages) {
    received = Math.max(received, Number(msg.headers?.get("Nats-Msg-Id")));
    receivedAt = performance.now();
    msg.ack();
  }
})();

/** One publish, tried again every 50 ms until acknowledged (as the outbox relay retries its batch). */
async function publishAcked(): Promise<void> {
  for (;;) {
    try {
      await js.publish("failover.x", "x", { msgID: String(++id), timeout: 1_000 });
      return;
    } catch {
      await sleep(50);
    }
  }
}

const KINDS = ["stream leader", "meta leader only", "consumer leader"] as const;
type Kind = (typeof KINDS)[number];
const perKind = () =>
  Object.fromEntries(KINDS.map((kind) => [kind, [] as number[]])) as Record<Kind, number[]>;
const stalls = perKind();
const consumeStalls = perKind();
const catchUps: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  for (let i = 0; i < 20; i++) await publishAcked();
  const streamLeader = (await jsm.streams.info("FAILOVER")).cluster?.leader;
  const consumerLeader = (await jsm.consumers.info("FAILOVER", "bench")).cluster?.leader;
  const victim = [streamLeader, await cluster.metaLeader(), consumerLeader][round % 3];
  if (!victim) throw new Error("no leader");
  const kind: Kind =
    victim === streamLeader
      ? "stream leader"
      : victim === consumerLeader
        ? "consumer leader"
        : "meta leader only";
  const killedAt = performance.now();
  await cluster.kill(victim);
  await publishAcked();
  const stall = (performance.now() - killedAt) / 1000;
  stalls[kind].push(stall);
  // Published after the kill: the consumer has resumed once it holds this one.
  const after = id;
  while (received < after) {
    await sleep(20);
    await publishAcked();
  }
  const consumeStall = (receivedAt - killedAt) / 1000;
  consumeStalls[kind].push(consumeStall);
  await cluster.restart(victim);
  const restartedAt = performance.now();
  for (;;) {
    const replicas = (await jsm.streams.info("FAILOVER").catch(() => undefined))?.cluster?.replicas ?? [];
    if (replicas.length === 2 && replicas.every((r) => r.current && !r.offline)) break;
    await sleep(100);
  }
  const catchUp = (performance.now() - restartedAt) / 1000;
  catchUps.push(catchUp);
  console.log(
    `kill ${round + 1}: ${victim} (${kind}): publish stalled ${stall.toFixed(1)} s, consume ${consumeStall.toFixed(1)} s; back and current ${catchUp.toFixed(1)} s after its restart`,
  );
}
messages.stop();
await nc.close();
await cluster.stop();

const range = (xs: number[]) =>
  xs.length === 0 ? "-" : `${Math.min(...xs).toFixed(1)}-${Math.max(...xs).toFixed(1)} s (${xs.length})`;
const byKind = (of: Record<Kind, number[]>) => KINDS.map((kind) => `${kind} ${range(of[kind])}`).join(", ");
console.log(`publish stall, by node killed: ${byKind(stalls)}; catch-up after restart ${range(catchUps)}`);
console.log(`consume stall (pull expiry ${expires} ms), by node killed: ${byKind(consumeStalls)}`);
