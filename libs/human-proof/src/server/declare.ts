import { HUMAN_PROOF } from "../common/constants.ts";

export type DeclareHumanProofOptions = {
  /** Text shown to the signer. */
  statement?: string;
  /** Signed `uri`; default: the URL of the resource being accessed. */
  resourceUri?: string;
  /** Signed `domain`; default: hostname of the resource URL. */
  domain?: string;
  /** Message version; default `1`. */
  version?: string;
  /** Challenge lifetime; no expiry when absent (900 recommended). */
  expirationSeconds?: number;
  /** CAIP-2 network(s) offered for signing; default: every network of the route's `accepts`. */
  network?: string | string[];
  /**
   * Lets an x402 payer other than the proof's signer take the human tier. Default false: a proof is spent only
   * by its own agent's payment, so a proof collected by another site cannot buy the discount for someone else.
   */
  payerMayDifferFromSigner?: boolean;
};

/** Per-route declaration placed at `extensions["human-proof"]`; same shape as Billions' server package. */
export type HumanProofDeclaration = {
  _options: DeclareHumanProofOptions;
  _type: typeof HUMAN_PROOF;
};

export function declareHumanProofExtension(options: DeclareHumanProofOptions = {}): HumanProofDeclaration {
  const { expirationSeconds } = options;
  if (expirationSeconds !== undefined && !(Number.isFinite(expirationSeconds) && expirationSeconds > 0)) {
    throw new Error(`expirationSeconds must be a positive number, got ${expirationSeconds}`);
  }
  return { _options: { ...options }, _type: HUMAN_PROOF };
}

export function isHumanProofDeclaration(value: unknown): value is HumanProofDeclaration {
  return typeof value === "object" && value !== null && (value as { _type?: unknown })._type === HUMAN_PROOF;
}
