import pino from "pino";
import { describe, expect, it } from "vitest";
import { checkedPaymentEvent, paymentEventOf } from "./payment-events.ts";

function capturingLogger() {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: "error" }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { logger, lines };
}

describe("checkedPaymentEvent", () => {
  it("passes an event that matches the catalog, as an outbox event of the PAYMENTS stream", () => {
    const { logger, lines } = capturingLogger();
    const { type, data } = paymentEventOf({
      type: "max_use_exceeded",
      resource: "http://gw/r",
      humanId: "42",
      maxUse: 5,
      scope: "premium",
    });
    expect(checkedPaymentEvent(type, data, logger)).toEqual({
      stream: "PAYMENTS",
      source: "payment-gateway",
      type: "max_use_exceeded",
      data: { humanId: "42", maxUse: 5, resource: "http://gw/r", scope: "premium" },
    });
    expect(lines).toEqual([]);
  });

  it("drops and logs one that does not, naming the field", () => {
    const { logger, lines } = capturingLogger();
    const data = { humanId: "not a number", maxUse: 5, resource: "http://gw/r" };
    expect(checkedPaymentEvent("max_use_exceeded", data, logger)).toBeUndefined();
    expect(lines).toEqual([
      expect.objectContaining({
        type: "max_use_exceeded",
        problem: expect.stringContaining("/humanId"),
        msg: "payment event does not match its schema; not written",
      }),
    ]);
  });
});
