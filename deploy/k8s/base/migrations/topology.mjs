/**
 * Applies the JetStream stream topology (every stream and the dead-letter stream, created or updated, with
 * JETSTREAM_REPLICAS and each stream's JETSTREAM_<STREAM>_MAX_AGE / _MAX_BYTES, docs/deploy.md) as the
 * `topology` NATS user, the only service-side user allowed to: services wait for their streams and may not create,
 * change, purge or delete one (deploy/k8s/base/nats/users.conf). The Kubernetes migration Job runs it from the
 * same ConfigMap as run.mjs, compose's `nats-topology` step mounts it, `make migrate` and `make up` run it too.
 * Plain JavaScript, so plain `node` runs it in a service image.
 */
import { applyTopologyAt, RetentionConfigError, retentionFromEnv } from "@humanpass/event-bus";

const servers = process.env.NATS_URL ?? "nats://127.0.0.1:4222";
const replicas = Number(process.env.JETSTREAM_REPLICAS ?? 1);
if (!Number.isInteger(replicas) || replicas < 1 || replicas > 5) {
  process.stderr.write(
    `JETSTREAM_REPLICAS: "${process.env.JETSTREAM_REPLICAS}" is not an integer from 1 to 5\n`,
  );
  process.exit(78);
}
let retention;
try {
  retention = retentionFromEnv(process.env);
} catch (e) {
  if (!(e instanceof RetentionConfigError)) throw e;
  process.stderr.write(`${e.message}\n`);
  process.exit(78);
}
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
  },
);
process.stdout.write(`streams applied${user ? ` as ${user}` : ""}: ${streams.join(", ")}\n`);
