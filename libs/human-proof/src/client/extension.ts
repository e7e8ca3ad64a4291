import type { ClientExtension, ClientExtensionHooks, HTTPClientExtensionHooks } from "@x402/core/client";
import type { PaymentPayload, PaymentRequired } from "@x402/core/types";
import { HUMAN_PROOF } from "../common/constants.ts";
import type { HumanProofChallenge } from "../common/types.ts";
import { assertX402Versions } from "../common/x402-versions.ts";
import { agentDidFromAddress } from "../server/verify-request.ts";
import { checkAttestation } from "./check-attestation.ts";
import { isMaxUseExceededError } from "./errors.ts";
import { crossOriginRedirectInto, watchRedirects } from "./redirect-watch.ts";
import { type AttestationAwareSelector, requiredAttestationsOf } from "./selector.ts";
import { challengeRefusal, type EVMSigner, signHumanProofChallengeEVM } from "./sign.ts";

export type HumanProofClientExtensionOptions = {
  /** Attestations list endpoint for the pre-signing check made when no `selector` is given. */
  attestationsApiBaseUrl?: string;
  /**
   * The selector given to `new x402Client(selector.selector)`. With it the extension refreshes the held
   * attestations on each 402 before a tier is chosen, and after a `max_use_exceeded` refusal disqualifies the
   * discounted tiers and asks the transport to retry, which then pays the standard tier.
   */
  selector?: AttestationAwareSelector;
  /**
   * Told why a 402's discounted tiers are skipped (its challenge is not for the URL requested) when a `selector`
   * lets the agent pay the standard tier instead. Default `console.warn`.
   */
  warn?: (message: string) => void;
};

export type AttestationRequirement = { schemaId: string };

/** Thrown before signing when the agent DID lacks a schema the chosen tier requires (as Billions' client does). */
export class MissingAttestationsError extends Error {
  readonly attestationRequirements: AttestationRequirement[];

  constructor(attestationRequirements: AttestationRequirement[]) {
    super(`Missing required attestations: ${attestationRequirements.map((a) => a.schemaId).join(", ")}`);
    this.name = "MissingAttestationsError";
    this.attestationRequirements = attestationRequirements;
  }
}

/**
 * Thrown (out of the x402 fetch call) when a 402 with a human-proof challenge was reached through a redirect from
 * another origin: x402's fetch would send the payment and its proof to the origin first asked, which could spend
 * them at the server that issued the challenge. Nothing is signed or paid.
 */
export class CrossOriginRedirectError extends Error {
  /** The URL that answered 402. */
  readonly paymentUrl: string;
  /** The origin the request was first sent to, which would have received the payment. */
  readonly requestedOrigin: string;

  constructor(paymentUrl: string, requestedOrigin: string) {
    super(
      `human-proof: refusing to pay ${paymentUrl}: the request to ${requestedOrigin} was redirected there, and the payment with its human proof would be sent to ${requestedOrigin}. Request the paid URL itself.`,
    );
    this.name = "CrossOriginRedirectError";
    this.paymentUrl = paymentUrl;
    this.requestedOrigin = requestedOrigin;
  }
}

/** The challenge of a 402 response, or null when the server did not declare human-proof. */
export function extractHumanProofChallenge(
  paymentRequired: Pick<PaymentRequired, "extensions">,
): HumanProofChallenge | null {
  const challenge = paymentRequired.extensions?.[HUMAN_PROOF] as Partial<HumanProofChallenge> | undefined;
  if (
    !challenge ||
    typeof challenge !== "object" ||
    !challenge.info ||
    !Array.isArray(challenge.supportedChains)
  ) {
    return null;
  }
  return challenge as HumanProofChallenge;
}

function signingChain(challenge: HumanProofChallenge, paymentNetwork: string | undefined): string {
  const evmChains = challenge.supportedChains.filter((chain) => chain.type === "eip191");
  const chain = evmChains.find((c) => c.chainId === paymentNetwork) ?? evmChains[0];
  if (!chain) {
    const offered = challenge.supportedChains.map((c) => `${c.chainId} (${c.type})`).join(", ");
    throw new Error(`the human-proof challenge offers no eip191 chain; offered: ${offered || "none"}`);
  }
  return chain.chainId;
}

async function assertHeld(did: string, schemas: string[], attestationsApiBaseUrl: string | undefined) {
  const checks = await Promise.all(
    schemas.map(async (schemaId) =>
      (await checkAttestation(did, schemaId, { attestationsApiBaseUrl })) ? null : schemaId,
    ),
  );
  const missing = checks.filter((schemaId): schemaId is string => schemaId !== null);
  if (missing.length) throw new MissingAttestationsError(missing.map((schemaId) => ({ schemaId })));
}

/**
 * Client extension for `x402Client.registerExtension`: when the chosen tier has `extra.requiredAttestations`,
 * checks that the server's challenge names the URL that answered 402 (its `uri`, and its host as `domain`),
 * signs it and puts the proof JSON text at `extensions["human-proof"]`, exactly as
 * Billions' client does. Other tiers are left alone. With a `selector`, a challenge for another URL makes the
 * agent pay that 402's standard tier (with a warning); without one, signing throws. Without a `selector` it also
 * checks that the agent DID holds the tier's schemas and throws `MissingAttestationsError` if not.
 * A 402 with a challenge reached through a redirect from another origin (seen on Node's fetch) is refused with
 * `CrossOriginRedirectError` before anything is signed or paid.
 */
export function createHumanProofExtension(
  signer: EVMSigner,
  options: HumanProofClientExtensionOptions = {},
): ClientExtension {
  assertX402Versions();
  const { selector, warn = console.warn } = options;
  watchRedirects();
  // The URL each 402 answered, as the transport reports it: the challenge must be for that URL.
  const requestedUrls = new WeakMap<object, string>();
  const http: HTTPClientExtensionHooks = {
    onPaymentRequired: async (_declaration, context) => {
      const redirectedFrom = crossOriginRedirectInto(context.requestUrl);
      if (redirectedFrom) throw new CrossOriginRedirectError(context.requestUrl, redirectedFrom);
      requestedUrls.set(context.paymentRequired, context.requestUrl);
      const challenge = extractHumanProofChallenge(context.paymentRequired);
      const refusal = challenge && challengeRefusal(challenge, context.requestUrl);
      if (refusal && selector) {
        // Not signing must not mean not paying: the standard tier needs no proof.
        warn(`human-proof: not signing, paying the standard tier instead: ${refusal}`);
        selector.skipDiscountedTiersOf(context.paymentRequired);
      }
      await selector?.refresh(context.paymentRequired);
    },
  };
  const hooks: ClientExtensionHooks | undefined = selector && {
    onPaymentResponse: async (_declaration, context) => {
      if (requiredAttestationsOf(context.requirements).length === 0) return;
      if (!context.paymentRequired || !isMaxUseExceededError(context.paymentRequired)) return;
      selector.disqualify();
      return { recovered: true };
    },
  };
  return {
    key: HUMAN_PROOF,
    async enrichPaymentPayload(
      paymentPayload: PaymentPayload,
      paymentRequired: PaymentRequired,
    ): Promise<PaymentPayload> {
      const challenge = extractHumanProofChallenge(paymentRequired);
      const required = requiredAttestationsOf(paymentPayload.accepted);
      if (!challenge || required.length === 0) return paymentPayload;
      if (!selector)
        await assertHeld(agentDidFromAddress(signer.address), required, options.attestationsApiBaseUrl);
      const resourceUrl = requestedUrls.get(paymentRequired);
      if (!resourceUrl) {
        throw new Error(
          "the human-proof extension signs only challenges of a 402 seen by its transport hook (@x402/fetch or another x402 HTTP client)",
        );
      }
      const chainId = signingChain(challenge, paymentPayload.accepted?.network);
      const proof = await signHumanProofChallengeEVM(challenge, signer, chainId, { resourceUrl });
      return { ...paymentPayload, extensions: { ...paymentPayload.extensions, [HUMAN_PROOF]: proof } };
    },
    transportHooks: { http },
    ...(hooks && { hooks }),
  };
}
