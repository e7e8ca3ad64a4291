import * as catalog from "@humanpass/events";
import { CloudEventEnvelope, EVENTS, STREAMS, type StreamName, subjectMatches } from "@humanpass/events";
import type { TSchema } from "@sinclair/typebox";
import { stringify } from "yaml";

/** Who writes each stream (the CloudEvents `source`) and who reads which subjects, as in docs/architecture.md. */
export const PRODUCERS: Record<StreamName, string> = {
  VERIFIER: "verifier",
  CHAIN: "chain-indexer",
  AGENT_AUTH: "agent-auth",
  PAYMENTS: "payment-gateway",
};

export const CONSUMERS: { service: string; subjects: string[]; why: string }[] = [
  {
    service: "attestations-api",
    subjects: ["chain.>"],
    why: "builds its read model of schemas and attestations",
  },
  {
    service: "attestations-api",
    subjects: ["verifier.uniqueness_verified"],
    why: "serves nullifiers by user id",
  },
  {
    service: "agent-auth",
    subjects: ["chain.attestation_revoked"],
    why: "drops cached pairings of a revoked attestation",
  },
  {
    service: "payment-gateway",
    subjects: ["chain.attestation_revoked"],
    why: "drops cached pairings of a revoked attestation",
  },
];

export const EVENT_SUMMARIES: Record<string, string> = {
  "verifier.uniqueness_verified":
    "A wallet's Proof of Uniqueness callback verified and its nullifier was recorded for the first time.",
  "chain.schema_registered": "A schema was registered in a schema registry (either ABI revision).",
  "chain.attestation_recorded":
    "An attestation was recorded in the attestation registry; the full record read with getAttestation.",
  "chain.attestation_revoked": "An attestation was revoked.",
  "chain.blocks_reverted":
    "A reorg orphaned blocks: every record seen in them is void; canonical blocks are indexed again afterwards.",
  "agent_auth.human_verified": "An agent's claim resolved to a verified human (helper or direct path).",
  "agent_auth.human_not_registered": "An agent's derived DID has no ownership attestation (or no nullifier).",
  "agent_auth.claim_accepted": "A claim passed every check: nonce, domain, signature, pairing and nullifier.",
  "payments.human_verified": "The human-proof hook confirmed a verified human behind a payment.",
  "payments.human_not_registered": "The payer's derived DID is not paired with a human.",
  "payments.max_use_exceeded":
    "A human used every allowed use of a discounted tier in a scope; the payment was refused.",
  "payments.payment_settled": "The facilitator settled a payment on chain.",
  "payments.payment_failed":
    "A payment failed at verify, settle or in the route handler; any quota taken was rolled back.",
};

/** The exported catalog name of a payload schema, so a schema shared by two streams is one component. */
function schemaName(schema: TSchema): string {
  const entry = Object.entries(catalog).find(([, value]) => value === schema);
  if (!entry) throw new Error(`a payload schema in EVENTS is not exported by name from @humanpass/events`);
  return entry[0];
}

/** TypeBox schemas are JSON Schema plus symbol keys; a JSON round trip keeps only the JSON Schema. */
const plain = (schema: TSchema): Record<string, unknown> => JSON.parse(JSON.stringify(schema));

export interface CatalogEntry {
  stream: StreamName;
  type: string;
  subject: string;
  schema: string;
  producer: string;
  consumers: string[];
}

export function catalogEntries(): CatalogEntry[] {
  return (Object.keys(EVENTS) as StreamName[]).flatMap((stream) =>
    Object.entries(EVENTS[stream] as Record<string, TSchema>).map(([type, schema]) => {
      const subject = `${STREAMS[stream].domain}.${type}`;
      return {
        stream,
        type,
        subject,
        schema: schemaName(schema),
        producer: PRODUCERS[stream],
        consumers: [
          ...new Set(
            CONSUMERS.filter((c) => c.subjects.some((p) => subjectMatches(p, subject))).map((c) => c.service),
          ),
        ],
      };
    }),
  );
}

const channelId = (subject: string) => subject.replace(/\./g, "_");

export function buildAsyncApi(): Record<string, unknown> {
  const entries = catalogEntries();
  const channels: Record<string, unknown> = {};
  const operations: Record<string, unknown> = {};
  const messages: Record<string, unknown> = {};
  const schemas: Record<string, unknown> = {
    CloudEvent: {
      ...plain(CloudEventEnvelope),
      description:
        "CloudEvents 1.0 structured JSON envelope. `id` is a UUIDv7 and equals the Nats-Msg-Id header; `source` is the producing service; `type` is the last token of the subject.",
    },
  };
  for (const e of entries) {
    const id = channelId(e.subject);
    schemas[e.schema] ??= plain((EVENTS[e.stream] as Record<string, TSchema>)[e.type]);
    messages[id] = {
      name: e.type,
      title: e.subject,
      summary: EVENT_SUMMARIES[e.subject] ?? "",
      contentType: "application/json",
      headers: { $ref: "#/components/schemas/NatsHeaders" },
      payload: {
        allOf: [
          { $ref: "#/components/schemas/CloudEvent" },
          {
            type: "object",
            properties: {
              source: { const: e.producer },
              type: { const: e.type },
              data: { $ref: `#/components/schemas/${e.schema}` },
            },
          },
        ],
      },
    };
    channels[id] = {
      address: e.subject,
      title: e.subject,
      description: `Stream \`${e.stream}\` (subjects \`${STREAMS[e.stream].domain}.>\`). Published by ${e.producer}. ${
        e.consumers.length > 0
          ? `Consumed by ${e.consumers.join(", ")}.`
          : "No humanpass service consumes it; it is for subscribers."
      } With EVENTS_PREFIX=p the subject is \`p.${e.subject}\` and the stream \`P_${e.stream}\`.`,
      messages: { [e.type]: { $ref: `#/components/messages/${id}` } },
    };
    operations[`publish_${id}`] = {
      action: "send",
      title: `${e.producer} publishes ${e.subject}`,
      channel: { $ref: `#/channels/${id}` },
      messages: [{ $ref: `#/channels/${id}/messages/${e.type}` }],
    };
  }
  schemas.NatsHeaders = {
    type: "object",
    properties: {
      "Nats-Msg-Id": {
        type: "string",
        description:
          "The event id; JetStream drops a duplicate within the stream's duplicate window (2 minutes).",
      },
      traceparent: {
        type: "string",
        description: "W3C trace context of the operation that caused the event.",
      },
      tracestate: { type: "string" },
    },
    required: ["Nats-Msg-Id"],
  };
  return {
    asyncapi: "3.0.0",
    info: {
      title: "humanpass events",
      version: "1.0.0",
      description:
        "Every event humanpass services publish on NATS JetStream. Generated from libs/events/src/catalog.ts by `npm run docs -w @humanpass/deploy-validate`; do not edit by hand. See docs/events.md.",
    },
    defaultContentType: "application/json",
    servers: {
      local: { host: "127.0.0.1:4222", protocol: "nats", description: "make up / docker compose" },
      cluster: {
        host: "nats.humanpass.svc:4222",
        protocol: "nats",
        description: "deploy/k8s: the 3-node JetStream StatefulSet",
      },
    },
    channels,
    operations,
    components: { schemas, messages },
  };
}

export function renderAsyncApi(): string {
  return `# Generated from libs/events/src/catalog.ts — do not edit; run: npm run docs -w @humanpass/deploy-validate\n${stringify(
    buildAsyncApi(),
    { lineWidth: 0, aliasDuplicateObjects: false },
  )}`;
}

function typeOf(schema: Record<string, any>): string {
  if (schema.anyOf) return schema.anyOf.map(typeOf).join(" \\| ");
  if (schema.const !== undefined) return `\`${JSON.stringify(schema.const)}\``;
  if (schema.type === "array") return `${typeOf(schema.items)}[]`;
  const hints: string[] = [];
  if (schema.pattern === "^0x[0-9a-fA-F]{64}$") hints.push("32-byte hex");
  else if (schema.pattern === "^0x[0-9a-fA-F]{40}$") hints.push("address");
  else if (schema.pattern === "^0x([0-9a-fA-F]{2})*$") hints.push("hex bytes");
  else if (schema.pattern === "^[0-9]+$") hints.push("decimal");
  if (schema.format) hints.push(schema.format);
  if (schema.minimum !== undefined) hints.push(`≥ ${schema.minimum}`);
  return `${schema.type}${hints.length ? ` (${hints.join(", ")})` : ""}`;
}

/** The per-subject field tables of docs/events.md. */
export function renderEventTables(): string {
  const out: string[] = [];
  for (const e of catalogEntries()) {
    const schema = plain((EVENTS[e.stream] as Record<string, TSchema>)[e.type]) as {
      properties: Record<string, any>;
      required?: string[];
    };
    out.push(`### \`${e.subject}\``, "");
    out.push(`${EVENT_SUMMARIES[e.subject] ?? ""}`, "");
    out.push(
      `Stream \`${e.stream}\` · source \`${e.producer}\` · consumed by ${e.consumers.length ? e.consumers.map((c) => `\`${c}\``).join(", ") : "no humanpass service"} · schema \`${e.schema}\``,
      "",
    );
    out.push("| field | type | required | notes |", "| - | - | - | - |");
    for (const [name, prop] of Object.entries(schema.properties)) {
      const notes = (prop.description ?? "").replace(/\|/g, "\\|");
      out.push(
        `| \`${name}\` | ${typeOf(prop)} | ${schema.required?.includes(name) ? "yes" : "no"} | ${notes} |`,
      );
    }
    out.push("");
  }
  return out.join("\n");
}

export const TABLES_BEGIN =
  "<!-- BEGIN GENERATED EVENT TABLES: npm run docs -w @humanpass/deploy-validate -->";
export const TABLES_END = "<!-- END GENERATED EVENT TABLES -->";

/** events.md with its generated section replaced by the current catalog's tables. */
export function withEventTables(markdown: string): string {
  const start = markdown.indexOf(TABLES_BEGIN);
  const end = markdown.indexOf(TABLES_END);
  if (start < 0 || end < start) throw new Error("docs/events.md lacks the generated-tables markers");
  return `${markdown.slice(0, start + TABLES_BEGIN.length)}\n\n${renderEventTables()}\n${markdown.slice(end)}`;
}
