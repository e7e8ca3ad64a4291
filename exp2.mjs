import { connect } from "@nats-io/transport-node";
import { jetstream, jetstreamManager, AckPolicy } from "@nats-io/jetstream";
const op = await connect({ servers: process.argv[2], user: "operator", pass: "op" });
const jsm = await jetstreamManager(op);
await jsm.streams.add({ name: "AGENT_AUTH", subjects: ["agent_auth.>"] });
await jsm.consumers.add("AGENT_AUTH", { durable_name: "d", ack_policy: AckPolicy.Explicit });
const out = (p) => p.then(() => "ok", (e) => e.message);
console.log("update to push:", await out(jsm.consumers.update("AGENT_AUTH", "d", { deliver_subject: "chain.x" })));
// raw create with same name, push config
const r = await op.request("$JS.API.CONSUMER.DURABLE.CREATE.AGENT_AUTH.d", JSON.stringify({ stream_name: "AGENT_AUTH", config: { durable_name: "d", ack_policy: "explicit", deliver_subject: "chain.x" } }));
console.log("raw durable create push on existing pull:", r.string());
const r2 = await op.request("$JS.API.CONSUMER.CREATE.AGENT_AUTH.d", JSON.stringify({ stream_name: "AGENT_AUTH", config: { durable_name: "d", name: "d", ack_policy: "explicit", deliver_subject: "chain.x" } }));
console.log("raw create push on existing pull:", r2.string());
const r3 = await op.request("$JS.API.CONSUMER.DURABLE.CREATE.AGENT_AUTH.e", JSON.stringify({ stream_name: "AGENT_AUTH", config: { durable_name: "e", ack_policy: "explicit", deliver_subject: "chain.x" } }));
console.log("raw durable create push new:", r3.string());
process.exit(0);
