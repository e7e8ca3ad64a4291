import { describe, expect, it } from "vitest";
import { formatJson, formatPretty } from "./format.ts";

const received = {
  stream: "PAYMENTS",
  seq: 12,
  subject: "payments.max_use_exceeded",
  event: {
    specversion: "1.0",
    id: "0193-abc",
    source: "payment-gateway",
    type: "max_use_exceeded",
    time: "2026-11-22T00:00:01.000Z",
    datacontenttype: "application/json",
    data: { humanId: "42", maxUse: 2, resource: "http://127.0.0.1:4021/weather" },
  },
};

describe("formatPretty", () => {
  it("prints a header line and one aligned line per payload field", () => {
    expect(formatPretty(received)).toBe(
      [
        "2026-11-22T00:00:01.000Z  payments.max_use_exceeded  payment-gateway  PAYMENTS#12 0193-abc",
        "    humanId   42",
        "    maxUse    2",
        "    resource  http://127.0.0.1:4021/weather",
      ].join("\n"),
    );
  });

  it("shows a message that is not a CloudEvent as text", () => {
    expect(formatPretty({ stream: "CHAIN", seq: 1, subject: "chain.x", event: "garbage" })).toBe(
      "chain.x #1 (not JSON) garbage",
    );
  });
});

describe("formatJson", () => {
  it("is one line that parses back to the same object", () => {
    const line = formatJson(received);
    expect(line).not.toContain("\n");
    expect(JSON.parse(line)).toEqual(received);
  });
});
