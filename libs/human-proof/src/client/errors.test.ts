import { encodePaymentRequiredHeader } from "@x402/core/http";
import type { PaymentRequired } from "@x402/core/types";
import { describe, expect, it } from "vitest";
import { isMaxUseExceededError } from "./errors.ts";

const paymentRequired = (error: string): PaymentRequired => ({
  x402Version: 2,
  error,
  resource: { url: "https://api.example.com/x", description: "", mimeType: "" },
  accepts: [],
});
const header = (error: string) => encodePaymentRequiredHeader(paymentRequired(error));

describe("isMaxUseExceededError", () => {
  it("recognises a max_use_exceeded refusal in a fetch Response, an axios-style error and a PaymentRequired", () => {
    const response = new Response(null, {
      status: 402,
      headers: { "PAYMENT-REQUIRED": header("max_use_exceeded") },
    });
    expect(isMaxUseExceededError(response)).toBe(true);
    expect(
      isMaxUseExceededError({
        response: { status: 402, headers: { "payment-required": header("max_use_exceeded") } },
      }),
    ).toBe(true);
    expect(isMaxUseExceededError(paymentRequired("max_use_exceeded"))).toBe(true);
  });

  it("is false for other reasons, other statuses and other values", () => {
    expect(
      isMaxUseExceededError(
        new Response(null, { status: 402, headers: { "PAYMENT-REQUIRED": header("not_registered") } }),
      ),
    ).toBe(false);
    expect(
      isMaxUseExceededError({
        response: { status: 403, headers: { "payment-required": header("max_use_exceeded") } },
      }),
    ).toBe(false);
    expect(isMaxUseExceededError({ response: { status: 402, headers: { "payment-required": "%%%" } } })).toBe(
      false,
    );
    expect(isMaxUseExceededError(paymentRequired("not_registered"))).toBe(false);
    expect(isMaxUseExceededError(new Error("max_use_exceeded"))).toBe(false);
    expect(isMaxUseExceededError(null)).toBe(false);
  });
});
