import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import {
  createCloudEvent,
  createWebhookSecret,
  signWebhook,
  verifyWebhook,
  WebhookVerificationError,
} from "../src/index.ts";

const event = createCloudEvent({
  source: "agent-auth",
  type: "human_verified",
  data: {
    humanId: "42",
    verifiedAt: "2026-11-26T08:00:00.000Z",
    humanDid: "did:iden3:billions:main:x",
    resource: "https://api.example.com/weather",
  },
});
const body = JSON.stringify(event);
const sentAt = new Date("2026-11-26T08:00:05.000Z");

function refusal(run: () => unknown): string | undefined {
  try {
    run();
  } catch (e) {
    if (e instanceof WebhookVerificationError) return e.code;
    throw e;
  }
  return undefined;
}

describe("Standard Webhooks signatures", () => {
  const secret = createWebhookSecret();
  const headers = signWebhook({ id: event.id, timestamp: sentAt, body, secrets: [secret] });

  it("verifies a signed delivery and returns the event, whose id is the webhook-id", () => {
    const received = verifyWebhook(body, headers, { secret, now: sentAt });
    expect(received).toEqual(event);
    expect(headers["webhook-id"]).toBe(event.id);
  });

  it("signs as the Standard Webhooks reference library does, in both directions", () => {
    const reference = new Webhook(secret);
    const withRealClock = signWebhook({ id: event.id, timestamp: new Date(), body, secrets: [secret] });
    expect(reference.verify(body, withRealClock)).toEqual(event);
    const signedByReference = reference.sign(event.id, sentAt, body);
    expect(signedByReference).toBe(headers["webhook-signature"]);
  });

  it("refuses a body changed after signing, and a signature made with another secret", () => {
    const tampered = body.replace('"42"', '"43"');
    expect(refusal(() => verifyWebhook(tampered, headers, { secret, now: sentAt }))).toBe("bad_signature");
    expect(refusal(() => verifyWebhook(body, headers, { secret: createWebhookSecret(), now: sentAt }))).toBe(
      "bad_signature",
    );
  });

  it("refuses a captured delivery replayed after the tolerance, and one dated in the future", () => {
    const sixMinutesLater = new Date(sentAt.getTime() + 6 * 60_000);
    expect(refusal(() => verifyWebhook(body, headers, { secret, now: sixMinutesLater }))).toBe(
      "timestamp_out_of_tolerance",
    );
    const sixMinutesEarlier = new Date(sentAt.getTime() - 6 * 60_000);
    expect(refusal(() => verifyWebhook(body, headers, { secret, now: sixMinutesEarlier }))).toBe(
      "timestamp_out_of_tolerance",
    );
  });

  it("refuses a delivery without its headers, and a signed body that is not a humanpass event", () => {
    const { "webhook-signature": _, ...unsigned } = headers;
    expect(refusal(() => verifyWebhook(body, unsigned, { secret, now: sentAt }))).toBe("missing_headers");
    const other = JSON.stringify({ ...event, data: { humanId: "not a number" } });
    const signed = signWebhook({ id: event.id, timestamp: sentAt, body: other, secrets: [secret] });
    expect(refusal(() => verifyWebhook(other, signed, { secret, now: sentAt }))).toBe("invalid_payload");
  });

  it("keeps receivers working through a rotation: both secrets sign until the old one is retired", () => {
    const next = createWebhookSecret();
    const rotating = signWebhook({ id: event.id, timestamp: sentAt, body, secrets: [next, secret] });
    expect(verifyWebhook(body, rotating, { secret, now: sentAt }).id).toBe(event.id);
    expect(verifyWebhook(body, rotating, { secret: next, now: sentAt }).id).toBe(event.id);
    expect(refusal(() => verifyWebhook(body, rotating, { secret: createWebhookSecret(), now: sentAt }))).toBe(
      "bad_signature",
    );
  });

  it("reads the headers of a fetch Request as well as a plain object", () => {
    expect(verifyWebhook(body, new Headers(headers), { secret, now: sentAt }).id).toBe(event.id);
  });
});
