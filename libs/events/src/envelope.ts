import { type Static, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { v7 as uuidv7 } from "uuid";
import { eventSchema, type StreamName } from "./catalog";

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

/** Checks the envelope and, when the catalog knows the type, the payload against the same schema producers use. */
export function assertValidEvent(stream: StreamName, event: unknown): asserts event is CloudEvent {
  if (!Value.Check(CloudEventEnvelope, event)) {
    const first = Value.Errors(CloudEventEnvelope, event).First();
    throw new InvalidEventError(`not a CloudEvent: ${first?.path} ${first?.message}`);
  }
  const schema = eventSchema(stream, event.type);
  if (!schema) throw new InvalidEventError(`unknown event type ${event.type} on stream ${stream}`);
  if (!Value.Check(schema, event.data)) {
    const first = Value.Errors(schema, event.data).First();
    throw new InvalidEventError(`invalid ${event.type} data: ${first?.path} ${first?.message}`);
  }
}
