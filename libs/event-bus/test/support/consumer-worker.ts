// A consumer in its own process, so a test can kill it mid-way (SIGKILL) and start another.

import { createDb } from "@humanpass/db";
import { sleep } from "@humanpass/retry";
import { connect } from "@nats-io/transport-node";
import pino from "pino";
import { startConsumer } from "../../src/index.ts";

const [databaseUrl, natsUrl, prefix, durable, slowMs] = process.argv.slice(2);
const db = createDb<any>({ connectionString: databaseUrl, schema: "svc" });
const nats = await connect({ servers: natsUrl });
await startConsumer({
  db,
  nats,
  topology: { prefix },
  stream: "AGENT_AUTH",
  durable,
  batchSize: 20,
  ackWaitMs: 2_000,
  logger: pino({ level: "silent" }),
  handler: async (event, trx) => {
    await trx.insertInto("applied").values({ event_id: event.id, n: event.data.n }).execute();
    // Keeps transactions open long enough that a kill lands inside one.
    await sleep(Number(slowMs));
  },
});
process.stdout.write("ready\n");
