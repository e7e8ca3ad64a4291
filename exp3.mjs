import { connect } from "@nats-io/transport-node";
import { jetstream, jetstreamManager, AckPolicy, DeliverPolicy } from "@nats-io/jetstream";
const op = await connect({ servers: process.argv[2], user: "operator", pass: "op" });
const jsm = await jetstreamManager(op);
await jsm.streams.add({ name: "AGENT_AUTH", subjects: ["agent_auth.>"] });
await jsm.streams.add({ name: "CHAIN", subjects: ["chain.>"] });
const js = jetstream(op);
await js.publish("agent_auth.x", "{}"); await js.publish("chain.y", "{}");
await jsm.consumers.add("AGENT_AUTH", { durable_name: "p", ack_policy: AckPolicy.None, deliver_policy: DeliverPolicy.All, deliver_subject: "chain.blocks_reverted" });
for (let i = 0; i < 20; i++) { await new Promise(r => setTimeout(r, 200)); }
console.log((await jsm.streams.info("CHAIN")).state.messages, JSON.stringify((await jsm.consumers.info("AGENT_AUTH", "p")).delivered), (await jsm.consumers.info("AGENT_AUTH", "p")).push_bound);
process.exit(0);
