import {
  STREAMS,
  type StreamName,
  streamName,
  streamSubjects,
  subjectOf,
  type Topology,
} from "@humanpass/events";
import { CHAIN_INVALIDATION_TYPES } from "./cache-invalidation.ts";
import { deadLetterStreamName, deadLetterSubject } from "./dead-letters.ts";
import { ATTESTATIONS_API_DURABLES, type DurableSpec, WEBHOOKS_DURABLES } from "./durables.ts";

/**
 * The one description of who may do what on NATS: deploy/k8s/base/nats/users.conf is generated from it
 * (`npx humanpass nats users-conf`), and a test fails when the committed file differs.
 *
 * Two kinds of NATS account. HUMANPASS holds the streams, the services and the tools; each subscriber (an outside
 * team) has an account of its own holding copies of the streams it was granted, sourced from HUMANPASS, and its
 * consumers, inboxes and deliver subjects. Nothing a subscriber does reaches a HUMANPASS subject: its push
 * consumers deliver inside its own account, and its user may not publish to the imports (docs/architecture.md).
 *
 * NATS permissions match whole subject tokens and never see a request's payload: a consumer's name is one token of
 * the JetStream API subjects (`$JS.API.CONSUMER.MSG.NEXT.<stream>.<consumer>`), so every durable is named, and
 * what a create request asks for (pull or push, its deliver subject) cannot be checked; see `servicePermissions`.
 */
export interface ServiceGrant {
  /** NATS user, also the service's CloudEvents `source`; its password is `$NATS_<USER>_PASSWORD`. */
  user: string;
  /** The stream whose subjects it publishes on (the stream it owns). */
  owns?: StreamName;
  /**
   * Durable pull consumers it reads with (acked), as the service starts them and the topology step creates them;
   * each may store dead letters under its own name.
   */
  durables: DurableSpec[];
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
  { user: "attestations-api", durables: Object.values(ATTESTATIONS_API_DURABLES), follows: [] },
  { user: "agent-auth", owns: "AGENT_AUTH", durables: [], follows: [CHAIN_INVALIDATIONS] },
  { user: "payment-gateway", owns: "PAYMENTS", durables: [], follows: [CHAIN_INVALIDATIONS] },
  { user: "webhooks", durables: WEBHOOKS_DURABLES, follows: [] },
];

/** The account of the streams, the services and the tools. */
export const SERVICES_ACCOUNT = "HUMANPASS";
/** Creates the topology's streams and the subscribers' copies (`humanpass nats topology`); changes none. */
export const TOPOLOGY_USER = "topology";
/** People only (`npx humanpass …` by hand, the nats CLI): everything, stream updates included. */
export const OPERATOR_USER = "operator";
/** `make reindex` and the attestations-api-reindex CronJob: deletes and replays attestations-api's durables. */
export const REINDEX_GRANT: ServiceGrant = {
  user: "attestations-api-reindex",
  durables: Object.values(ATTESTATIONS_API_DURABLES),
  follows: [],
};
/** The humanpass-dead-letters Job (deploy/k8s/base/maintenance): lists, replays and removes dead letters. */
export const DEAD_LETTERS_USER = "dead-letters";

export interface Permissions {
  publish: { allow: string[] };
  subscribe: { allow: string[] };
}

/**
 * Replies (JetStream API answers, pulled messages, PubAcks) come to the connection's inbox prefix; each user of the
 * HUMANPASS account has its own, so no user can subscribe to another's pulled messages. Clients must connect with
 * this `inboxPrefix`.
 */
export function inboxPrefixOf(user: string): string {
  return `_INBOX_${user}`;
}

const API = "$JS.API";

/**
 * What a durable's reader needs: create (the forms nats.js 3 sends to a 2.9 or later server,
 * `CONSUMER.CREATE.<stream>.<durable>[.<filter>]`: not the older `CONSUMER.DURABLE.CREATE`), info, pull, ack;
 * delete when `canDelete`.
 */
function durableSubjects(stream: string, durable: string, canDelete: boolean): string[] {
  return [
    `${API}.CONSUMER.CREATE.${stream}.${durable}`,
    `${API}.CONSUMER.CREATE.${stream}.${durable}.>`,
    `${API}.CONSUMER.INFO.${stream}.${durable}`,
    `${API}.CONSUMER.MSG.NEXT.${stream}.${durable}`,
    ...(canDelete ? [`${API}.CONSUMER.DELETE.${stream}.${durable}`] : []),
    `$JS.ACK.${stream}.${durable}.>`,
  ];
}

const unique = <T>(xs: T[]): T[] => [...new Set(xs)];

/**
 * A service reaches only its own subjects and durables. A create request's payload is not checked, so a durable
 * named like its own could be created as a push consumer delivering anywhere; three facts keep that from
 * happening: the topology step creates every service durable, pull, before the services start
 * (`applyServiceDurables`); a service may not delete its durables (only the reindex user may); and the server
 * refuses to turn an existing pull consumer into a push one (a pull consumer's `max_waiting` cannot change), so
 * every create of that name is an update of a pull consumer.
 */
export function servicePermissions(grant: ServiceGrant, topology: Topology, canDelete = false): Permissions {
  const read = unique([...grant.durables.map((d) => d.stream), ...grant.follows.map((f) => f.stream)]);
  const allow = [
    ...(grant.owns ? [subjectOf(topology, grant.owns, ">")] : []),
    `${API}.INFO`,
    ...unique([...(grant.owns ? [grant.owns] : []), ...read]).map(
      (s) => `${API}.STREAM.INFO.${streamName(topology, s)}`,
    ),
    ...(grant.durables.length > 0 ? [`${API}.STREAM.INFO.${deadLetterStreamName(topology)}`] : []),
    ...grant.durables.flatMap(({ stream, durable }) => [
      ...durableSubjects(streamName(topology, stream), durable, canDelete),
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

const ALL_STREAMS = Object.keys(STREAMS) as StreamName[];

/**
 * What `replayDeadLetter` and `listDeadLetters` call: read every stream's messages (to check a dead letter against
 * its original), publish to every stream's subjects, read the dead-letter stream through an ordered consumer and
 * remove what it replayed. No stream or durable of anyone changes.
 */
export function deadLettersPermissions(topology: Topology): Permissions {
  const dl = deadLetterStreamName(topology);
  return {
    publish: {
      allow: [
        ...ALL_STREAMS.map((s) => streamSubjects(topology, s)),
        `${API}.INFO`,
        ...ALL_STREAMS.flatMap((s) => [
          `${API}.STREAM.INFO.${streamName(topology, s)}`,
          `${API}.STREAM.MSG.GET.${streamName(topology, s)}`,
        ]),
        `${API}.STREAM.INFO.${dl}`,
        `${API}.STREAM.MSG.DELETE.${dl}`,
        `${API}.CONSUMER.CREATE.${dl}`,
        `${API}.CONSUMER.CREATE.${dl}.>`,
        `${API}.CONSUMER.INFO.${dl}.*`,
        `${API}.CONSUMER.MSG.NEXT.${dl}.*`,
        `${API}.CONSUMER.DELETE.${dl}.*`,
      ],
    },
    subscribe: { allow: [`${inboxPrefixOf(DEAD_LETTERS_USER)}.>`] },
  };
}

export interface SubscriberGrant {
  /** Lower-case letters, digits and `-`; the NATS user is `subscriber-<name>`, its account SUBSCRIBER_<NAME>. */
  name: string;
  streams: StreamName[];
}

export const SUBSCRIBER_NAME = /^[a-z0-9][a-z0-9-]{0,30}$/;

export function subscriberUser(name: string): string {
  return `subscriber-${name}`;
}

export function subscriberAccount(name: string): string {
  return `SUBSCRIBER_${name.toUpperCase().replace(/-/g, "_")}`;
}

/** Where, in the HUMANPASS account, the topology user reaches a subscriber account's stream API (an import). */
export function subscriberApiPrefix(name: string): string {
  return `$JS.${subscriberAccount(name)}.API`;
}

/** Where, in a subscriber's account, its streams' sources reach HUMANPASS's consumer API (an import). */
export const SERVICES_API_PREFIX = `$JS.${SERVICES_ACCOUNT}.API`;

/** The HUMANPASS subject a subscriber's copy of `stream` is delivered on (exported to that subscriber only). */
export function sourceDeliverPrefix(name: string, stream: string): string {
  return `_DELIVER.${subscriberUser(name)}.${stream}`;
}

/** Checks a grant; throws on a bad name or an unknown stream. */
export function checkSubscriberGrant(grant: SubscriberGrant): void {
  if (!SUBSCRIBER_NAME.test(grant.name))
    throw new Error(
      `subscriber name ${JSON.stringify(grant.name)}: lower-case letters, digits and -, at most 31`,
    );
  if (grant.streams.length === 0) throw new Error("a subscriber needs at least one stream");
  for (const s of grant.streams) {
    if (!(s in STREAMS)) throw new Error(`unknown stream ${s} (streams: ${ALL_STREAMS.join(", ")})`);
  }
}

/**
 * A subscriber in its own account: everything on the copies of its streams except changing them (their sources
 * are what the topology user set), so any consumer, durable or ephemeral, pull or push, whose deliveries stay in
 * that account, and any subscription there. Not the imports (`$JS.HUMANPASS.API.…`, `$JS.FC.…`): only the
 * account's own streams use them.
 */
export function subscriberPermissions(grant: SubscriberGrant, topology: Topology): Permissions {
  checkSubscriberGrant(grant);
  const streams = grant.streams.map((s) => streamName(topology, s));
  return {
    publish: {
      allow: [
        `${API}.INFO`,
        `${API}.STREAM.NAMES`,
        `${API}.STREAM.LIST`,
        ...streams.flatMap((s) => [
          `${API}.STREAM.INFO.${s}`,
          `${API}.STREAM.MSG.GET.${s}`,
          `${API}.DIRECT.GET.${s}`,
          `${API}.DIRECT.GET.${s}.>`,
        ]),
        `${API}.CONSUMER.>`,
        "$JS.ACK.>",
      ],
    },
    // Its own account's subjects only: its inboxes, its push consumers' deliver subjects.
    subscribe: { allow: [">"] },
  };
}

export function passwordVariable(user: string): string {
  return `NATS_${user.toUpperCase().replace(/-/g, "_")}_PASSWORD`;
}

/** The topology's streams, dead letters included: what the topology user may create. */
function topologyStreams(topology: Topology): string[] {
  return [...ALL_STREAMS.map((s) => streamName(topology, s)), deadLetterStreamName(topology)];
}

/**
 * Creates what is missing and reads the rest: the topology's streams, the services' durables (pull, before the
 * services start: `applyServiceDurables`) and each subscriber's copies (through the imports of their accounts'
 * stream APIs). No stream update: the payload of an update is invisible to permissions, so with it this user
 * could shrink a stream's limits (a purge in effect) or add subjects; changing an existing stream is `humanpass
 * nats topology --update --confirm`, as `operator`. A durable's create subject is its update's too, as for the
 * services themselves; the topology step sends it only for a durable that does not exist.
 */
export function topologyPermissions(topology: Topology, subscribers: SubscriberGrant[]): Permissions {
  return {
    publish: {
      allow: [
        `${API}.INFO`,
        ...topologyStreams(topology).flatMap((s) => [`${API}.STREAM.INFO.${s}`, `${API}.STREAM.CREATE.${s}`]),
        ...SERVICE_GRANTS.flatMap((g) => g.durables).flatMap(({ stream, durable }) => {
          const name = streamName(topology, stream);
          return [
            `${API}.CONSUMER.INFO.${name}.${durable}`,
            `${API}.CONSUMER.CREATE.${name}.${durable}`,
            `${API}.CONSUMER.CREATE.${name}.${durable}.>`,
          ];
        }),
        ...subscribers.flatMap((g) =>
          g.streams.flatMap((s) => [
            `${subscriberApiPrefix(g.name)}.STREAM.INFO.${streamName(topology, s)}`,
            `${subscriberApiPrefix(g.name)}.STREAM.CREATE.${streamName(topology, s)}`,
          ]),
        ),
      ],
    },
    subscribe: { allow: [`${inboxPrefixOf(TOPOLOGY_USER)}.>`] },
  };
}

const q = (s: string) => JSON.stringify(s);

function renderPermissions(p: Permissions, indent: string): string {
  const list = (xs: string[]) =>
    xs.length <= 2
      ? `[${xs.map(q).join(", ")}]`
      : `[\n${xs.map((x) => `${indent}      ${q(x)},`).join("\n")}\n${indent}    ]`;
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

/** One entry of an account's `users` list; the password is a `$VARIABLE` or a quoted literal. */
export function renderUser(
  user: string,
  password: string,
  permissions?: Permissions,
  indent = "      ",
): string {
  const pass = password.startsWith("$") ? password : q(password);
  if (!permissions) return `${indent}{ user: ${q(user)}, password: ${pass} }`;
  return [
    `${indent}{`,
    `${indent}  user: ${q(user)}`,
    `${indent}  password: ${pass}`,
    renderPermissions(permissions, `${indent}  `),
    `${indent}}`,
  ].join("\n");
}

const userEntry = (user: string, permissions?: Permissions) =>
  renderUser(user, `$${passwordVariable(user)}`, permissions);

/** A subscriber's JetStream API subjects its streams' sources call in HUMANPASS (nats 2.9 and 2.10 forms). */
function sourceApiSubjects(topology: Topology, stream: StreamName): string[] {
  const name = streamName(topology, stream);
  return [`${API}.CONSUMER.CREATE.${name}`, `${API}.CONSUMER.CREATE.${name}.>`];
}

const serviceImport = (account: string, subject: string, to?: string) =>
  `      { service: { account: ${account}, subject: ${q(subject)} }${to ? `, to: ${q(to)}` : ""} }`;

/** A subscriber's account: its user, the imports its streams' sources use, its stream API for the topology user. */
export function renderSubscriberAccount(grant: SubscriberGrant, topology: Topology): string {
  checkSubscriberGrant(grant);
  const imports = grant.streams.flatMap((s) => [
    ...sourceApiSubjects(topology, s).map((subject) =>
      serviceImport(SERVICES_ACCOUNT, subject, subject.replace(API, SERVICES_API_PREFIX)),
    ),
    serviceImport(SERVICES_ACCOUNT, `$JS.FC.${streamName(topology, s)}.>`),
    `      { stream: { account: ${SERVICES_ACCOUNT}, subject: ${q(`${sourceDeliverPrefix(grant.name, streamName(topology, s))}.>`)} } }`,
  ]);
  const exports = grant.streams.flatMap((s) =>
    ["INFO", "CREATE"].map(
      (call) =>
        `      { service: ${q(`${API}.STREAM.${call}.${streamName(topology, s)}`)}, accounts: [${SERVICES_ACCOUNT}] }`,
    ),
  );
  return [
    `  # ${subscriberUser(grant.name)}: reads copies of ${grant.streams.join(", ")} in an account of its own`,
    `  ${subscriberAccount(grant.name)}: {`,
    "    jetstream: enabled",
    "    users: [",
    userEntry(subscriberUser(grant.name), subscriberPermissions(grant, topology)),
    "    ]",
    "    imports: [",
    ...imports,
    "    ]",
    "    exports: [",
    ...exports,
    "    ]",
    "  }",
  ].join("\n");
}

/** HUMANPASS's side of the subscribers: what their sources may call and receive, and their stream APIs. */
function servicesExportsAndImports(topology: Topology, subscribers: SubscriberGrant[]): string[] {
  if (subscribers.length === 0) return [];
  const readers = (stream: StreamName) =>
    subscribers.filter((g) => g.streams.includes(stream)).map((g) => subscriberAccount(g.name));
  const granted = ALL_STREAMS.filter((s) => readers(s).length > 0);
  const exportTo = (subject: string, accounts: string[], kind = "service") =>
    `      { ${kind}: ${q(subject)}, accounts: [${accounts.join(", ")}] }`;
  return [
    "    exports: [",
    ...granted.flatMap((s) => [
      ...sourceApiSubjects(topology, s).map((subject) => exportTo(subject, readers(s))),
      exportTo(`$JS.FC.${streamName(topology, s)}.>`, readers(s)),
    ]),
    ...subscribers.flatMap((g) =>
      g.streams.map((s) =>
        exportTo(
          `${sourceDeliverPrefix(g.name, streamName(topology, s))}.>`,
          [subscriberAccount(g.name)],
          "stream",
        ),
      ),
    ),
    "    ]",
    "    imports: [",
    ...subscribers.flatMap((g) =>
      g.streams.flatMap((s) =>
        ["INFO", "CREATE"].map((call) => {
          const subject = `${API}.STREAM.${call}.${streamName(topology, s)}`;
          return serviceImport(
            subscriberAccount(g.name),
            subject,
            subject.replace(API, subscriberApiPrefix(g.name)),
          );
        }),
      ),
    ),
    "    ]",
  ];
}

/**
 * deploy/k8s/base/nats/users.conf, byte for byte, with no subscriber; with `subscribers`, the file of a deployment
 * that has them (`npx humanpass nats users-conf --subscriber <name>=<STREAM,…>`): their accounts and HUMANPASS's
 * exports and imports for them.
 */
export function renderUsersConf(topology: Topology, subscribers: SubscriberGrant[] = []): string {
  const services = SERVICE_GRANTS.map((g) => userEntry(g.user, servicePermissions(g, topology)));
  return `${[
    "# GENERATED by `npx humanpass nats users-conf` from libs/event-bus/src/permissions.ts: edit that file, not this",
    "# one (a test fails when they differ). Passwords come from the environment. Account HUMANPASS holds the streams:",
    "# services publish only their own stream's subjects and reach only their own durables; `topology` creates",
    "# streams and changes none; `operator` is for people; the unattended tools have users of their own. Each",
    "# subscriber gets an account of its own (`npx humanpass nats users-conf --subscriber <name>=<STREAM,…>`).",
    "accounts {",
    `  ${SERVICES_ACCOUNT}: {`,
    "    jetstream: enabled",
    "    users: [",
    ...services,
    userEntry(TOPOLOGY_USER, topologyPermissions(topology, subscribers)),
    userEntry(REINDEX_GRANT.user, servicePermissions(REINDEX_GRANT, topology, true)),
    userEntry(DEAD_LETTERS_USER, deadLettersPermissions(topology)),
    userEntry(OPERATOR_USER),
    "    ]",
    ...servicesExportsAndImports(topology, subscribers),
    "  }",
    ...subscribers.map((g) => renderSubscriberAccount(g, topology)),
    "}",
  ].join("\n")}\n`;
}

/** `<name>=<STREAM,…>` (the `--subscriber` flag and `$NATS_SUBSCRIBERS`, space separated) to a grant. */
export function parseSubscriberGrant(spec: string): SubscriberGrant {
  const [name = "", streams = ""] = spec.split("=");
  const grant = {
    name,
    streams: streams
      .split(",")
      .map((s) => s.trim().toUpperCase())
      .filter(Boolean) as StreamName[],
  };
  checkSubscriberGrant(grant);
  return grant;
}

export function parseSubscriberGrants(list: string | undefined): SubscriberGrant[] {
  return (list ?? "").split(/\s+/).filter(Boolean).map(parseSubscriberGrant);
}
