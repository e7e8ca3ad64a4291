/**
 * Creates the JetStream stream topology (every stream and the dead-letter stream, with JETSTREAM_REPLICAS and each
 * stream's JETSTREAM_<STREAM>_MAX_AGE / _MAX_BYTES, docs/deploy.md), every service's durable pull consumers and the copies of each subscriber of
 * NATS_SUBSCRIBERS (`<name>=<STREAM,…>`, space separated) as the `topology` NATS user, the only service-side user
 * allowed to create one: services wait for their streams (deploy/k8s/base/nats/users.conf). An existing stream is not changed (the
 * topology user may not update one): its differences are printed; `--update --confirm`, as the `operator` user,
 * applies them. The Kubernetes migration Job runs it from the same ConfigMap as run.mjs, compose's `nats-topology`
 * step mounts it, `make migrate` and `make up` run it too. Plain JavaScript, so plain `node` runs it in a service
 * image.
 */
import {
  applyTopologyAt,
  driftName,
  parseSubscriberGrants,
  RetentionConfigError,
  retentionFromEnv,
} from "@humanpass/event-bus";

const servers = process.env.NATS_URL ?? "nats://127.0.0.1:4222";
const replicas = Number(process.env.JETSTREAM_REPLICAS ?? 1);
const fail = (message) => {
  process.stderr.write(`${message}\n`);
  process.exit(78);
};
if (!Number.isInteger(replicas) || replicas < 1 || replicas > 5)
  fail(`JETSTREAM_REPLICAS: "${process.env.JETSTREAM_REPLICAS}" is not an integer from 1 to 5`);
let retention;
try {
  retention = retentionFromEnv(process.env);
} catch (e) {
  if (!(e instanceof RetentionConfigError)) throw e;
  fail(e.message);
}
let subscribers;
try {
  subscribers = parseSubscriberGrants(process.env.NATS_SUBSCRIBERS);
} catch (e) {
  fail(`NATS_SUBSCRIBERS: ${e.message}`);
}
const args = process.argv.slice(2);
const update = args.includes("--update") && args.includes("--confirm");
if (args.some((a) => a !== "--update" && a !== "--confirm") || args.includes("--update") !== update)
  fail("usage: topology.mjs [--update --confirm]");
const user = process.env.NATS_USER || undefined;
const streams = await applyTopologyAt(
  servers,
  { prefix: process.env.EVENTS_PREFIX ?? "" },
  {
    user,
    pass: process.env.NATS_PASSWORD,
    tlsCaFile: process.env.NATS_TLS_CA || undefined,
    replicas,
    retention,
    subscribers,
    update,
    onDrift: (drift) =>
      process.stdout.write(
        `${driftName(drift)} ${update ? "updated" : "differs from the topology, not changed"}: ${drift.changes.join(", ")}\n`,
      ),
  },
);
process.stdout.write(`streams and durables applied${user ? ` as ${user}` : ""}: ${streams.join(", ")}\n`);
