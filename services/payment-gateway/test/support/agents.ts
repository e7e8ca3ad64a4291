/** Paying agents as a user would write them: `@x402/fetch` with a viem account, with or without human proof. */
import {
  buildDIDFromAddress,
  createAttestationAwareSelector,
  createHumanProofClientExtension,
  DEFAULT_AGENT_OWNERSHIP_SCHEMA,
  extractHumanProofChallenge,
  signHumanProofChallengeEVMUnchecked,
} from "@humanpass/human-proof";
import type { ClientExtension } from "@x402/core/client";
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from "@x402/core/http";
import type { Network, PaymentPayload, PaymentRequired, PaymentRequirements } from "@x402/core/types";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import type { Address, Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";

export type PayingFetch = (input: string, init?: RequestInit) => Promise<Response>;

export interface AgentOptions {
  network: Network;
  usdc: Address;
  selector?: (x402Version: number, requirements: PaymentRequirements[]) => PaymentRequirements;
  extension?: ClientExtension;
}

export function humanSigner(privateKey: Hex) {
  const account = privateKeyToAccount(privateKey);
  return { address: account.address, signMessage: (message: string) => account.signMessage({ message }) };
}

/** An x402 agent; the devnet token is not one of x402's default assets, so it is allowed explicitly. */
export function agentFetch(privateKey: Hex, options: AgentOptions): PayingFetch {
  const client = new x402Client(options.selector).setSpendControls({
    allowedAssets: [{ network: options.network, asset: options.usdc }],
  });
  registerExactEvmScheme(client, { signer: privateKeyToAccount(privateKey) });
  if (options.extension) client.registerExtension(options.extension);
  return wrapFetchWithPayment(fetch, client);
}

/** Our client extension with the attestation-aware selector: discounted tier while it qualifies, else standard. */
export function humanAgentFetch(
  privateKey: Hex,
  options: AgentOptions & { attestationsUrl: string },
): PayingFetch {
  const address = privateKeyToAccount(privateKey).address;
  const selector = createAttestationAwareSelector(
    buildDIDFromAddress(address),
    [DEFAULT_AGENT_OWNERSHIP_SCHEMA],
    {
      attestationsApiBaseUrl: options.attestationsUrl,
    },
  );
  return agentFetch(privateKey, {
    ...options,
    selector: selector.selector,
    extension: createHumanProofClientExtension(humanSigner(privateKey), { selector }),
  });
}

export type ProofEdit = (proof: Record<string, unknown>) => Record<string, unknown> | string | undefined;
export type ChallengeEdit = (info: Record<string, unknown>) => Record<string, unknown>;

/**
 * Signs whatever challenge the server sent, without asking whether the agent qualifies, and lets a test
 * edit the proof (or drop it, when `edit` returns undefined) after signing: the agent a server must refuse.
 */
export function rawProofExtension(
  privateKey: Hex,
  edit: ProofEdit = (proof) => proof,
  beforeSigning: ChallengeEdit = (info) => info,
): ClientExtension {
  const signer = humanSigner(privateKey);
  return {
    key: "human-proof",
    async enrichPaymentPayload(
      paymentPayload: PaymentPayload,
      paymentRequired: PaymentRequired,
    ): Promise<PaymentPayload> {
      const challenge = extractHumanProofChallenge(paymentRequired);
      if (!challenge) return paymentPayload;
      const signed = { ...challenge, info: beforeSigning({ ...challenge.info }) } as typeof challenge;
      const proof = JSON.parse(
        await signHumanProofChallengeEVMUnchecked(signed, signer, challenge.supportedChains[0].chainId),
      );
      const edited = edit(proof);
      if (edited === undefined) return paymentPayload;
      const value = typeof edited === "string" ? edited : JSON.stringify(edited);
      return { ...paymentPayload, extensions: { ...paymentPayload.extensions, "human-proof": value } };
    },
  };
}

/** Always takes the human tier and never falls back: what a refused human-tier payment looks like. */
export function humanTierOnlyFetch(
  privateKey: Hex,
  options: AgentOptions,
  edit?: ProofEdit,
  beforeSigning?: ChallengeEdit,
): PayingFetch {
  return agentFetch(privateKey, {
    ...options,
    selector: (_v, requirements) =>
      requirements.find((r) => Array.isArray(r.extra?.requiredAttestations)) ?? requirements[0],
    extension: rawProofExtension(privateKey, edit, beforeSigning),
  });
}

/** The payment-required `error` of a 402, as the client reads it. */
export function paymentError(response: Response): string | undefined {
  const header = response.headers.get("payment-required");
  return header ? decodePaymentRequiredHeader(header).error : undefined;
}

export function settlementOf(response: Response) {
  const header = response.headers.get("payment-response");
  return header ? decodePaymentResponseHeader(header) : undefined;
}
