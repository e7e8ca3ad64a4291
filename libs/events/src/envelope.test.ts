import { describe, expect, it } from "vitest";
import { assertValidEvent, createCloudEvent, InvalidEventError } from "./envelope.ts";

const verified = (verifiedAt: string) =>
  createCloudEvent({
    source: "verifier",
    type: "uniqueness_verified",
    data: {
      sessionId: 7,
      nullifier: "12",
      nullifierSessionId: "3",
      userDid: "did:iden3:x",
      userId: "99",
      verifiedAt,
    },
  });

describe("CloudEvents envelope", () => {
  it("makes CloudEvents 1.0 with time-ordered UUIDv7 ids", () => {
    const a = verified("2026-11-22T00:00:00.000Z");
    const b = verified("2026-11-22T00:00:00.000Z");
    expect(a).toMatchObject({
      specversion: "1.0",
      source: "verifier",
      type: "uniqueness_verified",
      datacontenttype: "application/json",
    });
    expect(a.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(a.id < b.id).toBe(true);
  });

  it("accepts a payload valid for the catalog, date-times included", () => {
    expect(() => assertValidEvent("VERIFIER", verified("2026-11-22T00:00:00.000Z"))).not.toThrow();
  });

  it("names what is wrong in an invalid payload, an unknown type and a non-event", () => {
    expect(() => assertValidEvent("VERIFIER", verified("yesterday"))).toThrow(
      "invalid uniqueness_verified data: /verifiedAt",
    );
    expect(() => assertValidEvent("CHAIN", verified("2026-11-22T00:00:00.000Z"))).toThrow(
      /unknown event type uniqueness_verified on stream CHAIN/,
    );
    expect(() => assertValidEvent("VERIFIER", { hello: 1 })).toThrow(InvalidEventError);
  });

  it("refuses an event whose source is not its stream's owner", () => {
    const forged = { ...verified("2026-11-22T00:00:00.000Z"), source: "payment-gateway" };
    expect(() => assertValidEvent("VERIFIER", forged)).toThrow(
      "event from payment-gateway on stream VERIFIER, whose events come from verifier",
    );
  });
});
