export type SignatureType = "eip191" | "ed25519";

export type SupportedChain = {
  /** CAIP-2 chain id, e.g. `eip155:45056`. */
  chainId: string;
  type: SignatureType;
};

/** `info` of the challenge a server puts in `extensions["human-proof"]` of a 402 response. */
export type HumanProofExtensionInfo = {
  domain: string;
  uri?: string;
  version: string;
  nonce: string;
  issuedAt: string;
  expirationTime?: string;
  statement?: string;
  resources?: string[];
  requiredAttestations: string[];
};

export type HumanProofChallenge = {
  info: HumanProofExtensionInfo;
  supportedChains: SupportedChain[];
  schema?: unknown;
};

/** The signed proof an agent sends back: every challenge field plus the signature fields. */
export type HumanProofPayload = HumanProofExtensionInfo & {
  chainId: string;
  type: string;
  address: string;
  signature: string;
};
