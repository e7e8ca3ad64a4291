import { connect, type NatsConnection, type NodeConnectionOptions } from "@nats-io/transport-node";
import type { Meter } from "@opentelemetry/api";
import type { Logger } from "pino";
import { inboxPrefixOf } from "./permissions.ts";

const inboxPrefixes = new WeakMap<NatsConnection, string>();

/** The inbox prefix a connection was opened with (its user's own, see `inboxPrefixOf`), for inboxes made by hand. */
export function inboxPrefixFor(nc: NatsConnection): string | undefined {
  return inboxPrefixes.get(nc);
}

/** Who connects (a user of users.conf, none on a server without authentication) and whom it trusts. */
export interface NatsAccess {
  user?: string;
  pass?: string;
  /** PEM file of the CA that signed the servers' certificates (NATS_TLS_CA): set, the connection must be TLS. */
  tlsCaFile?: string;
}

/** The connect options of an access: the user with its own inbox prefix (`inboxPrefixOf`), TLS checked by the CA. */
export function accessOptions(access: NatsAccess = {}): Partial<NodeConnectionOptions> {
  return {
    ...(access.user ? { user: access.user, pass: access.pass, inboxPrefix: inboxPrefixOf(access.user) } : {}),
    ...(access.tlsCaFile ? { tls: { caFile: access.tlsCaFile } } : {}),
  };
}

/**
 * Connects to NATS and keeps reconnecting forever: an outage delays events (the outbox holds them), it never
 * loses them or stops the process.
 */
export async function connectNats(
  url: string,
  logger: Logger,
  name?: string,
  access?: NatsAccess,
): Promise<NatsConnection> {
  const options = accessOptions(access);
  const nc = await connect({
    servers: url.split(","),
    name,
    ...options,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    // A server cut off without closing its connections (a partition, a paused or frozen node) is noticed only when
    // pings go unanswered: at the client's defaults (every 2 minutes, stale past 2 outstanding) the connection, and
    // the outbox relay publishing on it, would stay with it for 6 minutes. Stale here after 9 s.
    pingInterval: 3_000,
    maxPingOut: 2,
    // The first reconnection after a disconnect goes to the same server again (nats.js rotates its list only from
    // then on): a frozen node accepts the TCP connection and never answers, so this bounds that try (default 20 s).
    timeout: 5_000,
    waitOnFirstConnect: true,
    // Otherwise every request (a consumer's fetch and ack, a JetStream manager call) builds an Error up front
    // for the stack trace of a timeout that almost never comes.
    noAsyncTraces: true,
  });
  if (options.inboxPrefix) inboxPrefixes.set(nc, options.inboxPrefix);
  (async () => {
    for await (const status of nc.status()) {
      if (status.type === "disconnect")
        logger.warn({ server: (status as { server?: string }).server }, "NATS disconnected");
      else if (status.type === "reconnect") logger.info("NATS reconnected");
    }
  })().catch((e) => logger.error({ err: (e as Error).message }, "NATS status watch ended"));
  return nc;
}

/**
 * `humanpass_nats_connected` (1 while connected, 0 while disconnected or closed) and
 * `humanpass_nats_disconnects_total`, from the connection's status events.
 */
export function observeNats(meter: Meter, nc: NatsConnection): void {
  let connected = !nc.isClosed();
  const disconnects = meter.createCounter("humanpass_nats_disconnects_total", {
    description: "Times the NATS connection was lost",
  });
  disconnects.add(0);
  meter
    .createObservableGauge("humanpass_nats_connected", {
      description: "1 while the NATS connection is up, 0 while it is lost or closed",
    })
    .addCallback((result) => result.observe(connected && !nc.isClosed() ? 1 : 0));
  (async () => {
    for await (const status of nc.status()) {
      if (status.type === "disconnect") {
        connected = false;
        disconnects.add(1);
      } else if (status.type === "reconnect") connected = true;
    }
  })().catch(() => {
    connected = false;
  });
}

/** Resolves when the server answers a round trip; used by readiness checks. */
export async function pingNats(nc: NatsConnection): Promise<void> {
  if (nc.isClosed()) throw new Error("NATS connection closed");
  await nc.rtt();
}
