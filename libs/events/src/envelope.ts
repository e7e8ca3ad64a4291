import { FormatRegistry, type Static, type TSchema, Type } from "@sinclair/typebox";
import { type TypeCheck, TypeCompiler } from "@sinclair/typebox/compiler";
import { v7 as uuidv7 } from "uuid";
import { eventSchema, STREAMS, type StreamName } from "./catalog.ts";

export const CloudEventEnvelope = Type.Object({
  specversion: Type.Literal("1.0"),
  id: Type.String({ minLength: 1 }),
  source: Type.String({ minLength: 1 }),
  type: Type.String({ minLength: 1 }),
  time: Type.String(),
  subject: Type.Optional(Type.String()),
  datacontenttype: Type.Literal("application/json"),
  data: Type.Unknown(),
});

export type CloudEvent<D = unknown> = Omit<Static<typeof CloudEventEnvelope>, "data"> & { data: D };

export class InvalidEventError extends Error {
  override name = "InvalidEventError";
}

export function createCloudEvent<D>(input: {
  source: string;
  type: string;
  data: D;
  subject?: string;
  id?: string;
  time?: Date;
}): CloudEvent<D> {
  return {
    specversion: "1.0",
    id: input.id ?? uuidv7(),
    source: input.source,
    type: input.type,
    time: (input.time ?? new Date()).toISOString(),
    ...(input.subject ? { subject: input.subject } : {}),
    datacontenttype: "application/json",
    data: input.data,
  };
}

// The catalog's timestamps are RFC 3339 date-times; TypeBox checks no format it was not taught.
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
if (!FormatRegistry.Has("date-time")) {
  FormatRegistry.Set("date-time", (value) => DATE_TIME.test(value) && !Number.isNaN(Date.parse(value)));
}

// Consumers validate every message: compiled checks are several times faster than Value.Check.
const compiled = new Map<TSchema, TypeCheck<TSchema>>();
function checker(schema: TSchema): TypeCheck<TSchema> {
  let check = compiled.get(schema);
  if (!check) {
    check = TypeCompiler.Compile(schema);
    compiled.set(schema, check);
  }
  return check;
}

/**
 * Checks the envelope, the payload against the same schema producers use, and that the event comes from the one
 * service that publishes on its stream.
 */
export function assertValidEvent(stream: StreamName, event: unknown): asserts event is CloudEvent {
  const envelope = checker(CloudEventEnvelope);
  if (!envelope.Check(event)) {
    const first = envelope.Errors(event).First();
    throw new InvalidEventError(`not a CloudEvent: ${first?.path} ${first?.message}`);
  }
  const { type, data, source } = event as CloudEvent;
  const schema = eventSchema(stream, type);
  if (!schema) throw new InvalidEventError(`unknown event type ${type} on stream ${stream}`);
  const payload = checker(schema);
  if (!payload.Check(data)) {
    const first = payload.Errors(data).First();
    throw new InvalidEventError(`invalid ${type} data: ${first?.path} ${first?.message}`);
  }
  if (source !== STREAMS[stream].source) {
    throw new InvalidEventError(
      `event from ${source} on stream ${stream}, whose events come from ${STREAMS[stream].source}`,
    );
  }
}
