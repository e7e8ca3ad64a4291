import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { STREAMS, type StreamName } from "./catalog.ts";
import { assertValidEvent, type CloudEvent } from "./envelope.ts";

/**
 * Webhooks follow Standard Webhooks (https://www.standardwebhooks.com): the body is the CloudEvent as JSON, and
 * `webhook-signature` holds `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`, one per
 * active secret (space separated) while a secret is being rotated. Secrets are `whsec_<base64 key>`.
 */
export const WEBHOOK_SECRET_PREFIX = "whsec_";
/** How far `webhook-timestamp` may be from the receiver's clock: a captured request cannot be replayed later. */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

export type WebhookVerificationCode =
  | "missing_headers"
  | "timestamp_out_of_tolerance"
  | "bad_signature"
  | "invalid_payload";

export class WebhookVerificationError extends Error {
  override name = "WebhookVerificationError";
  readonly code: WebhookVerificationCode;

  constructor(code: WebhookVerificationCode, message: string) {
    super(message);
    this.code = code;
  }
}

/** A new random signing secret (24 bytes). */
export function createWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(24).toString("base64");
}

function keyOf(secret: string): Buffer {
  return Buffer.from(
    secret.startsWith(WEBHOOK_SECRET_PREFIX) ? secret.slice(WEBHOOK_SECRET_PREFIX.length) : secret,
    "base64",
  );
}

function sign(secret: string, id: string, timestamp: number, body: string): Buffer {
  return createHmac("sha256", keyOf(secret)).update(`${id}.${timestamp}.${body}`).digest();
}

/** The three headers of one delivery attempt, signed with every secret given (the newest first, by convention). */
export function signWebhook(input: {
  id: string;
  timestamp: Date;
  body: string;
  secrets: string[];
}): Record<"webhook-id" | "webhook-timestamp" | "webhook-signature", string> {
  const seconds = Math.floor(input.timestamp.getTime() / 1000);
  return {
    "webhook-id": input.id,
    "webhook-timestamp": String(seconds),
    "webhook-signature": input.secrets
      .map((secret) => `v1,${sign(secret, input.id, seconds, input.body).toString("base64")}`)
      .join(" "),
  };
}

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const value = record[name] ?? record[Object.keys(record).find((k) => k.toLowerCase() === name) ?? ""];
  return Array.isArray(value) ? value[0] : value;
}

export interface VerifyWebhookOptions {
  /** Your endpoint's secret; during a rotation, both the old and the new one. */
  secret: string | string[];
  toleranceSeconds?: number;
  /** The receiver's clock (tests). */
  now?: Date;
}

/**
 * Checks a delivery as received (the raw body, before any JSON parsing, and its headers) and returns the event.
 * Throws `WebhookVerificationError` when a header is missing, the timestamp is more than `toleranceSeconds` away
 * (a replayed request), no signature matches a secret, or the body is not a valid humanpass event. Deliveries are
 * at least once: dedupe on `event.id` (equal to `webhook-id`).
 */
export function verifyWebhook(
  // Uint8Array rather than Buffer (which is one) so the declarations need no @types/node in a consumer.
  body: string | Uint8Array,
  headers: HeaderSource,
  options: VerifyWebhookOptions,
): CloudEvent {
  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (!id || !timestamp || !signatures)
    throw new WebhookVerificationError(
      "missing_headers",
      "webhook-id, webhook-timestamp and webhook-signature are required",
    );
  const seconds = Number(timestamp);
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (
    !/^\d+$/.test(timestamp) ||
    Math.abs(now - seconds) > (options.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS)
  )
    throw new WebhookVerificationError(
      "timestamp_out_of_tolerance",
      "webhook-timestamp is too old or too new",
    );
  const text = typeof body === "string" ? body : new TextDecoder().decode(body);
  const secrets = Array.isArray(options.secret) ? options.secret : [options.secret];
  const offered = signatures
    .split(" ")
    .filter((s) => s.startsWith("v1,"))
    .map((s) => Buffer.from(s.slice(3), "base64"));
  const matches = secrets.some((secret) => {
    const expected = sign(secret, id, seconds, text);
    return offered.some(
      (candidate) => candidate.length === expected.length && timingSafeEqual(candidate, expected),
    );
  });
  if (!matches) throw new WebhookVerificationError("bad_signature", "no signature matches the secret");
  let event: unknown;
  try {
    event = JSON.parse(text);
    assertValidEvent(streamOfSource((event as CloudEvent).source), event);
  } catch (e) {
    throw new WebhookVerificationError("invalid_payload", `not a humanpass event: ${(e as Error).message}`);
  }
  if (event.id !== id)
    throw new WebhookVerificationError("invalid_payload", "webhook-id is not the event's id");
  return event;
}

function streamOfSource(source: string): StreamName {
  const found = (Object.keys(STREAMS) as StreamName[]).find((s) => STREAMS[s].source === source);
  if (!found) throw new Error(`unknown source ${source}`);
  return found;
}
