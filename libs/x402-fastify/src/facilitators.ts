import { randomBytes } from "node:crypto";
import type { x402Facilitator } from "@x402/core/facilitator";
import type { FacilitatorClient } from "@x402/core/server";
import type {
  Network,
  PaymentPayload,
  PaymentRequirements,
  SettleResponse,
  SupportedResponse,
  VerifyResponse,
} from "@x402/core/types";

/** A facilitator running in this process (for instance x402's own with the EVM `exact` scheme on a devnet). */
export function createInProcessFacilitatorClient(facilitator: x402Facilitator): FacilitatorClient {
  return {
    verify: (paymentPayload, requirements) => facilitator.verify(paymentPayload, requirements),
    settle: (paymentPayload, requirements) => facilitator.settle(paymentPayload, requirements),
    getSupported: async () => facilitator.getSupported() as SupportedResponse,
  };
}

export interface MockFacilitatorOptions {
  /** Networks and schemes it claims to support. */
  kinds: Array<{ network: Network; scheme: string }>;
}

/**
 * Accepts every payment without looking at the chain and invents a transaction hash: development and
 * benchmarks only, never where money matters.
 */
export function createMockFacilitatorClient(options: MockFacilitatorOptions): FacilitatorClient {
  return {
    async verify(paymentPayload: PaymentPayload): Promise<VerifyResponse> {
      return { isValid: true, payer: payerOf(paymentPayload) };
    },
    async settle(paymentPayload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse> {
      return {
        success: true,
        payer: payerOf(paymentPayload),
        transaction: `0x${randomBytes(32).toString("hex")}`,
        network: requirements.network,
        amount: requirements.amount,
      };
    },
    async getSupported(): Promise<SupportedResponse> {
      return {
        kinds: options.kinds.map(({ network, scheme }) => ({ x402Version: 2, scheme, network })),
        extensions: [],
        signers: {},
      };
    },
  };
}

/** The payer named by an EVM `exact` payload (EIP-3009 authorization or Permit2), if any. */
export function payerOf(paymentPayload: PaymentPayload): string | undefined {
  const payload = paymentPayload.payload as {
    authorization?: { from?: unknown };
    permit2Authorization?: { from?: unknown };
  };
  const from = payload.authorization?.from ?? payload.permit2Authorization?.from;
  return typeof from === "string" ? from : undefined;
}
