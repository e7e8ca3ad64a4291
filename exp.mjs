import { connect } from "@nats-io/transport-node";
import { jetstream, jetstreamManager, AckPolicy } from "@nats-io/jetstream";
const url = process.argv[2];
const op = await connect({ servers: url, user: "operator", pass: "op" });
const topo = await connect({ servers: url, user: "topology", pass: "tp", inboxPrefix: "_INBOX_topology" });
const tjsm = await jetstreamManager(topo);
await tjsm.streams.add({ name: "AGENT_AUTH", subjects: ["agent_auth.>"] }).catch(e => console.log("create", e.message));
const sjsm = await jetstreamManager(topo, { apiPrefix: "$JS.sub.acme.API", checkAPI: false });
try {
await sjsm.streams.add({ name: "AGENT_AUTH", sources: [{ name: "AGENT_AUTH", external: { api: "$JS.humanpass.API", deliver: "deliver.acme.agent_auth" } }] });
} catch (e) { console.log("sub create", e.message); }
const js = jetstream(op);
for (let i = 0; i < 5; i++) await js.publish("agent_auth.human_verified", JSON.stringify({ i }));
const acme = await connect({ servers: url, user: "subscriber-acme", pass: "ac" });
const ajsm = await jetstreamManager(acme);
for (let t = 0; t < 50; t++) { const i = await ajsm.streams.info("AGENT_AUTH"); if (i.state.messages === 5) { console.log("sourced", i.state); break; } await new Promise(r => setTimeout(r, 100)); }
await ajsm.consumers.add("AGENT_AUTH", { durable_name: "acme_x", ack_policy: AckPolicy.Explicit, filter_subject: "agent_auth.human_verified" });
const m = await (await jetstream(acme).consumers.get("AGENT_AUTH", "acme_x")).next({ expires: 2000 });
console.log("got", m?.subject, m?.string());
process.exit(0);
