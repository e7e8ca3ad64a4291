import { createHash, timingSafeEqual } from "node:crypto";
import type { Kysely } from "@humanpass/db";
import { EVENTS, STREAMS, type StreamName } from "@humanpass/events";
import { ErrorBody, type HttpApp, HttpError, Type } from "@humanpass/http";
import type { Clock } from "@humanpass/service";
import { listDeadLetters, replayDeadLetters } from "../db/deliveries.ts";
import {
  createEndpoint,
  deleteEndpoint,
  listEndpoints,
  retirePreviousSecrets,
  rotateSecret,
} from "../db/endpoints.ts";
import type { WebhooksDb } from "../db/schema.ts";
import { type AddressPolicy, RefusedAddressError } from "../delivery/address-policy.ts";

/** Every subject a webhook may subscribe to, e.g. `agent_auth.human_verified`. */
export const EVENT_SUBJECTS = (Object.keys(EVENTS) as StreamName[]).flatMap((stream) =>
  Object.keys(EVENTS[stream]).map((type) => `${STREAMS[stream].domain}.${type}`),
);

const Endpoint = Type.Object({
  id: Type.String({ format: "uuid" }),
  url: Type.String(),
  eventTypes: Type.Array(Type.String()),
  createdAt: Type.String({ format: "date-time" }),
});
const NewEndpoint = Type.Object(
  {
    url: Type.String({ pattern: "^https?://", maxLength: 2048 }),
    eventTypes: Type.Array(Type.Union(EVENT_SUBJECTS.map((s) => Type.Literal(s))), {
      minItems: 1,
      uniqueItems: true,
    }),
  },
  { additionalProperties: false },
);
const Id = Type.Object({ id: Type.String({ format: "uuid" }) });
const Secret = Type.Object({ secret: Type.String() });
const DeadLetter = Type.Object({
  eventId: Type.String(),
  subject: Type.String(),
  attempts: Type.Integer(),
  lastError: Type.Union([Type.String(), Type.Null()]),
  event: Type.Unknown(),
});
const notFound = () => new HttpError(404, "endpoint_not_found", "no endpoint with this id");

// A lone surrogate (not Unicode text) or NUL: Postgres' text cannot hold either, and nobody means them.
const UNSTORABLE = /[\0\p{Cs}]/u;

/** The first string in `value` (keys included) that Postgres' text cannot hold, described by where it is. */
function unstorableString(value: unknown, path: string): string | undefined {
  if (typeof value === "string") return UNSTORABLE.test(value) ? path : undefined;
  if (value === null || typeof value !== "object") return undefined;
  for (const [key, item] of Object.entries(value)) {
    const where = Array.isArray(value) ? `${path}[${key}]` : `${path}.${key}`;
    if (UNSTORABLE.test(key)) return `a key of ${path}`;
    const found = unstorableString(item, where);
    if (found) return found;
  }
  return undefined;
}

/** Refuses any input string holding NUL or a lone surrogate, before validation, with the field it is in. */
const refuseUnstorableStrings = async (request: { body?: unknown; query?: unknown; params?: unknown }) => {
  for (const [part, value] of [
    ["body", request.body],
    ["query", request.query],
    ["params", request.params],
  ] as const) {
    const where = unstorableString(value, part);
    if (where)
      throw new HttpError(400, "invalid_string", `${where} holds a NUL character or a lone surrogate`);
  }
};

/** The endpoint URL as the delivery will use it, or a 400 saying why it is not one. */
function endpointUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new HttpError(400, "invalid_url", "not a URL (scheme://host[:port]/path)");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new HttpError(400, "invalid_url", "the URL must use https");
  if (url.port === "0") throw new HttpError(400, "invalid_url", "port 0 cannot be connected to");
  if (url.username || url.password)
    throw new HttpError(400, "credentials_in_url", "put no credentials in the endpoint URL");
  return url;
}

/**
 * The admin API: register endpoints, rotate their secrets, list and replay their dead letters. Every route needs
 * `Authorization: Bearer <ADMIN_TOKEN>`.
 */
export function endpointRoutes(
  app: HttpApp,
  deps: { db: Kysely<WebhooksDb>; policy: AddressPolicy; clock: Clock; adminToken: string },
): void {
  const { db, policy, clock } = deps;
  const expected = createHash("sha256").update(deps.adminToken).digest();
  const security = [{ adminToken: [] }];

  const onRequest = async (request: { headers: { authorization?: string } }) => {
    const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? "")?.[1] ?? "";
    if (!timingSafeEqual(createHash("sha256").update(token).digest(), expected))
      throw new HttpError(401, "unauthorized", "a valid admin bearer token is required");
  };
  const guards = { onRequest, preValidation: refuseUnstorableStrings };

  app.post(
    "/admin/v1/endpoints",
    {
      ...guards,
      schema: {
        summary: "Register an endpoint; the answer holds its signing secret (shown once)",
        security,
        body: NewEndpoint,
        response: { 201: Type.Intersect([Endpoint, Secret]), 400: ErrorBody, 401: ErrorBody, 422: ErrorBody },
      },
    },
    async (request, reply) => {
      const url = endpointUrl(request.body.url);
      let address: string;
      try {
        ({ address } = await policy.resolve(url.hostname));
      } catch (e) {
        if (!(e instanceof RefusedAddressError) && !(e as NodeJS.ErrnoException).code) throw e;
        throw new HttpError(422, "endpoint_address_refused", (e as Error).message);
      }
      // Plain http only to a receiver the operator allow-listed (a private network, a test).
      if (url.protocol !== "https:" && !policy.allowListed(address))
        throw new HttpError(422, "https_required", "endpoints must use https");
      reply.code(201);
      return createEndpoint(
        db,
        { url: url.toString(), eventTypes: request.body.eventTypes },
        new Date(clock()),
      );
    },
  );

  app.get(
    "/admin/v1/endpoints",
    {
      ...guards,
      schema: {
        summary: "List endpoints",
        security,
        response: { 200: Type.Array(Endpoint), 401: ErrorBody },
      },
    },
    async () => listEndpoints(db),
  );

  app.delete(
    "/admin/v1/endpoints/:id",
    {
      ...guards,
      schema: {
        summary: "Remove an endpoint and its deliveries",
        security,
        params: Id,
        response: { 204: Type.Null(), 404: ErrorBody },
      },
    },
    async (request, reply) => {
      if (!(await deleteEndpoint(db, request.params.id))) throw notFound();
      reply.code(204);
      return null;
    },
  );

  app.post(
    "/admin/v1/endpoints/:id/secrets",
    {
      ...guards,
      schema: {
        summary: "Start a rotation: a new secret signs beside the current one until the previous is retired",
        security,
        params: Id,
        response: { 201: Secret, 404: ErrorBody },
      },
    },
    async (request, reply) => {
      const secret = await rotateSecret(db, request.params.id);
      if (!secret) throw notFound();
      reply.code(201);
      return { secret };
    },
  );

  app.delete(
    "/admin/v1/endpoints/:id/secrets/previous",
    {
      ...guards,
      schema: {
        summary: "End a rotation: only the newest secret signs",
        security,
        params: Id,
        response: { 204: Type.Null(), 404: ErrorBody },
      },
    },
    async (request, reply) => {
      if (!(await retirePreviousSecrets(db, request.params.id))) throw notFound();
      reply.code(204);
      return null;
    },
  );

  app.get(
    "/admin/v1/endpoints/:id/dead-letters",
    {
      ...guards,
      schema: {
        summary: "Deliveries given up after the retry window",
        security,
        params: Id,
        querystring: Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }) }),
        response: { 200: Type.Array(DeadLetter) },
      },
    },
    async (request) => listDeadLetters(db, request.params.id, request.query.limit),
  );

  app.post(
    "/admin/v1/endpoints/:id/dead-letters/replay",
    {
      ...guards,
      schema: {
        summary: "Deliver dead letters again (all, or the listed event ids), with a fresh retry window",
        security,
        params: Id,
        body: Type.Object(
          { eventIds: Type.Optional(Type.Array(Type.String({ maxLength: 256 }), { maxItems: 1000 })) },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ replayed: Type.Array(Type.String()) }) },
      },
    },
    async (request) => ({
      replayed: await replayDeadLetters(db, request.params.id, new Date(clock()), request.body.eventIds),
    }),
  );
}
