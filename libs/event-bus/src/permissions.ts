import { STREAMS, type StreamName, streamName, subjectOf, type Topology } from "@humanpass/events";
import { CHAIN_INVALIDATION_TYPES } from "./cache-invalidation.ts";
import { deadLetterStreamName, deadLetterSubject } from "./dead-letters.ts";

/**
 * The one description of who may do what on NATS: deploy/k8s/base/nats/users.conf is generated from it
 * (`npx humanpass nats users-conf`), and a test fails when the committed file differs.
 *
 * NATS permissions match whole subject tokens, and a consumer's name is one token of the JetStream API subjects
 * (`$JS.API.CONSUMER.MSG.NEXT.<stream>.<consumer>`): a name prefix cannot be granted, so every durable is named.
 */
export interface ServiceGrant {
  /** NATS user, also the service's CloudEvents `source`; its password is `$NATS_<USER>_PASSWORD`. */
  user: string;
  /** The stream whose subjects it publishes on (the stream it owns). */
  owns?: StreamName;
  /** Durable pull consumers it reads with (acked); each may store dead letters under its own name. */
  durables: Array<{ stream: StreamName; durable: string }>;
  /**
   * Event types it follows with plain subscriptions to their subjects (a replica's cache invalidations: nothing
   * acked, no consumer on the server), so it needs no consumer API on that stream.
   */
  follows: Array<{ stream: StreamName; types: string[] }>;
}

const CHAIN_INVALIDATIONS = { stream: "CHAIN" as const, types: [...CHAIN_INVALIDATION_TYPES] };

export const SERVICE_GRANTS: ServiceGrant[] = [
  { user: "verifier", owns: "VERIFIER", durables: [], follows: [] },
  { user: "chain-indexer", owns: "CHAIN", durables: [], follows: [] },
  {
    user: "attestations-api",
    durables: [
      { stream: "CHAIN", durable: "attestations-api-chain" },
      { stream: "VERIFIER", durable: "attestations-api-verifier" },
    ],
    follows: [],
  },
  { user: "agent-auth", owns: "AGENT_AUTH", durables: [], follows: [CHAIN_INVALIDATIONS] },
  { user: "payment-gateway", owns: "PAYMENTS", durables: [], follows: [CHAIN_INVALIDATIONS] },
  {
    // Relays every stream to registered endpoints (services/webhooks/src/events/ingest.ts names these durables).
    user: "webhooks",
    durables: [
      { stream: "VERIFIER", durable: "webhooks-verifier" },
      { stream: "CHAIN", durable: "webhooks-chain" },
      { stream: "AGENT_AUTH", durable: "webhooks-agent_auth" },
      { stream: "PAYMENTS", durable: "webhooks-payments" },
    ],
    follows: [],
  },
];

/** Applies the stream topology (`humanpass nats topology`): the only user that creates or changes streams. */
export const TOPOLOGY_USER = "topology";
/** People and tools (`npx humanpass events …`, the nats CLI): everything, replays of dead letters included. */
export const OPERATOR_USER = "operator";

export interface Permissions {
  publish: { allow: string[] };
  subscribe: { allow: string[] };
}

/**
 * Replies (JetStream API answers, pulled messages, PubAcks) come to the connection's inbox prefix; each user has
 * its own, so no user can subscribe to another's pulled messages. Clients must connect with this `inboxPrefix`.
 */
export function inboxPrefixOf(user: string): string {
  return `_INBOX_${user}`;
}

const API = "$JS.API";

/** What a durable's reader needs: create (either API form), info, pull, ack; delete when `canDelete`. */
function durableSubjects(stream: string, durable: string, canDelete: boolean): string[] {
  return [
    `${API}.CONSUMER.DURABLE.CREATE.${stream}.${durable}`,
    `${API}.CONSUMER.CREATE.${stream}.${durable}`,
    `${API}.CONSUMER.CREATE.${stream}.${durable}.>`,
    `${API}.CONSUMER.INFO.${stream}.${durable}`,
    `${API}.CONSUMER.MSG.NEXT.${stream}.${durable}`,
    ...(canDelete ? [`${API}.CONSUMER.DELETE.${stream}.${durable}`] : []),
    `$JS.ACK.${stream}.${durable}.>`,
  ];
}

const unique = <T>(xs: T[]): T[] => [...new Set(xs)];

export function servicePermissions(grant: ServiceGrant, topology: Topology): Permissions {
  const read = unique([...grant.durables.map((d) => d.stream), ...grant.follows.map((f) => f.stream)]);
  const allow = [
    ...(grant.owns ? [subjectOf(topology, grant.owns, ">")] : []),
    `${API}.INFO`,
    ...unique([...(grant.owns ? [grant.owns] : []), ...read]).map(
      (s) => `${API}.STREAM.INFO.${streamName(topology, s)}`,
    ),
    ...(grant.durables.length > 0 ? [`${API}.STREAM.INFO.${deadLetterStreamName(topology)}`] : []),
    ...grant.durables.flatMap(({ stream, durable }) => [
      // Deleting its own durables is what `make reindex` does before replaying a stream.
      ...durableSubjects(streamName(topology, stream), durable, true),
      deadLetterSubject(topology, durable),
    ]),
  ];
  return {
    publish: { allow: unique(allow) },
    subscribe: {
      allow: [
        `${inboxPrefixOf(grant.user)}.>`,
        ...grant.follows.flatMap(({ stream, types }) =>
          types.map((type) => subjectOf(topology, stream, type)),
        ),
      ],
    },
  };
}

export interface SubscriberGrant {
  /** Lower-case letters, digits and `-`; the NATS user is `subscriber-<name>`. */
  name: string;
  streams: StreamName[];
  /**
   * Consumer names, each `<name>_<suffix>`; when none are given, one `<name>_<stream>` per granted stream and
   * `<name>_replay` (what `replaySince` uses). Each may be used on every granted stream.
   */
  durables?: string[];
}

export const SUBSCRIBER_NAME = /^[a-z0-9][a-z0-9-]{0,30}$/;
const DURABLE_SUFFIX = /^[a-z0-9][a-z0-9-]{0,30}$/;

export function subscriberUser(name: string): string {
  return `subscriber-${name}`;
}

/** The durables a subscriber may use; throws on a name or durable outside its prefix. */
export function subscriberDurables(grant: SubscriberGrant): string[] {
  if (!SUBSCRIBER_NAME.test(grant.name))
    throw new Error(
      `subscriber name ${JSON.stringify(grant.name)}: lower-case letters, digits and -, at most 31`,
    );
  if (grant.streams.length === 0) throw new Error("a subscriber needs at least one stream");
  for (const s of grant.streams) {
    if (!(s in STREAMS)) throw new Error(`unknown stream ${s} (streams: ${Object.keys(STREAMS).join(", ")})`);
  }
  const durables = grant.durables?.length
    ? grant.durables
    : [
        ...grant.streams.map((s) => `${grant.name}_${s.toLowerCase().replace(/_/g, "-")}`),
        `${grant.name}_replay`,
      ];
  for (const d of durables) {
    const prefix = `${grant.name}_`;
    if (!d.startsWith(prefix) || !DURABLE_SUFFIX.test(d.slice(prefix.length)))
      throw new Error(`durable ${JSON.stringify(d)} must be ${prefix}<lower-case letters, digits, ->`);
  }
  return unique(durables);
}

/**
 * A subscriber (an outside team's backend): reads the granted streams through its own durables only. No event
 * subject, no stream change, no consumer of anyone else, no ephemeral consumer (whose random name no permission
 * could tell from another's).
 */
export function subscriberPermissions(grant: SubscriberGrant, topology: Topology): Permissions {
  const durables = subscriberDurables(grant);
  const streams = grant.streams.map((s) => streamName(topology, s));
  return {
    publish: {
      allow: [
        `${API}.INFO`,
        ...streams.map((s) => `${API}.STREAM.INFO.${s}`),
        ...streams.flatMap((s) => durables.flatMap((d) => durableSubjects(s, d, true))),
      ],
    },
    subscribe: { allow: [`${inboxPrefixOf(subscriberUser(grant.name))}.>`] },
  };
}

export function passwordVariable(user: string): string {
  return `NATS_${user.toUpperCase().replace(/-/g, "_")}_PASSWORD`;
}

function renderPermissions(p: Permissions, indent: string): string {
  const list = (xs: string[]) =>
    xs.length <= 2
      ? `[${xs.map((x) => JSON.stringify(x)).join(", ")}]`
      : `[\n${xs.map((x) => `${indent}      ${JSON.stringify(x)},`).join("\n")}\n${indent}    ]`;
  return [
    `${indent}permissions: {`,
    `${indent}  publish: {`,
    `${indent}    allow: ${list(p.publish.allow)}`,
    `${indent}  }`,
    `${indent}  subscribe: {`,
    `${indent}    allow: ${list(p.subscribe.allow)}`,
    `${indent}  }`,
    `${indent}}`,
  ].join("\n");
}

/** One entry of a users.conf `users` list; the password is a `$VARIABLE` or a quoted literal. */
export function renderUser(
  user: string,
  password: string,
  permissions?: Permissions,
  indent = "    ",
): string {
  const pass = password.startsWith("$") ? password : JSON.stringify(password);
  if (!permissions) return `${indent}{ user: ${JSON.stringify(user)}, password: ${pass} }`;
  return [
    `${indent}{`,
    `${indent}  user: ${JSON.stringify(user)}`,
    `${indent}  password: ${pass}`,
    renderPermissions(permissions, `${indent}  `),
    `${indent}}`,
  ].join("\n");
}

/** deploy/k8s/base/nats/users.conf, byte for byte; `extraUsers` are rendered entries (subscribers) to append. */
export function renderUsersConf(topology: Topology, extraUsers: string[] = []): string {
  const services = SERVICE_GRANTS.map((g) =>
    renderUser(g.user, `$${passwordVariable(g.user)}`, servicePermissions(g, topology)),
  );
  return `${[
    "# GENERATED by `npx humanpass nats users-conf` from libs/event-bus/src/permissions.ts: edit that file, not this",
    "# one (a test fails when they differ). docker-compose.yml and the nats StatefulSet load it; passwords come from",
    "# the environment. Services publish only their own stream's subjects and reach only their own consumers;",
    `# \`${TOPOLOGY_USER}\` alone creates and updates streams (the migrations step); \`${OPERATOR_USER}\` is for people`,
    "# and tools. Subscribers (`npx humanpass nats subscriber`) are added in an operator's copy, never here.",
    "authorization {",
    "  users: [",
    ...services,
    renderUser(TOPOLOGY_USER, `$${passwordVariable(TOPOLOGY_USER)}`, {
      // What applying the topology calls (ensureStreams): never a stream delete or purge, nor any consumer.
      publish: {
        allow: [`${API}.INFO`, ...["INFO", "CREATE", "UPDATE"].map((call) => `${API}.STREAM.${call}.*`)],
      },
      subscribe: { allow: [`${inboxPrefixOf(TOPOLOGY_USER)}.>`] },
    }),
    renderUser(OPERATOR_USER, `$${passwordVariable(OPERATOR_USER)}`),
    ...extraUsers,
    "  ]",
    "}",
  ].join("\n")}\n`;
}
