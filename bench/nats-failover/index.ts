// What losing a NATS node costs a publisher on a 3-node JetStream cluster (the machine's nats-server, three processes
// on loopback ports), the stream at 3 replicas: the node leading the stream, then the meta leader, SIGKILLed in turn,
// ROUNDS times. Prints, per kill, the seconds from the kill until a JetStream publish is acknowledged again (the
// publish stall) and the seconds from the node's restart until both of its peers are current on the stream.
import { setTimeout as sleep } from "node:timers/promises";
import { startNatsCluster } from "@humanpass/testing";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
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

const stalls: Record<string, number[]> = { "stream leader": [], "meta leader only": [] };
const catchUps: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  for (let i = 0; i < 20; i++) await publishAcked();
  const streamLeader = (await jsm.streams.info("FAILOVER")).cluster?.leader;
  const victim = round % 2 === 0 ? streamLeader : await cluster.metaLeader();
  if (!victim) throw new Error("no leader");
  const kind = victim === streamLeader ? "stream leader" : "meta leader only";
  const killedAt = performance.now();
  await cluster.kill(victim);
  await publishAcked();
  const stall = (performance.now() - killedAt) / 1000;
  stalls[kind]!.push(stall);
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
    `kill ${round + 1}: ${victim} (${kind}): publish stalled ${stall.toFixed(1)} s; back and current ${catchUp.toFixed(1)} s after its restart`,
  );
}
await nc.close();
await cluster.stop();

const range = (xs: number[]) =>
  xs.length === 0 ? "-" : `${Math.min(...xs).toFixed(1)}-${Math.max(...xs).toFixed(1)} s (${xs.length})`;
console.log(
  `publish stall: stream leader killed ${range(stalls["stream leader"]!)}, meta leader only ${range(stalls["meta leader only"]!)}; catch-up after restart ${range(catchUps)}`,
);
