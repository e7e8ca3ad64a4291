import { randomBytes } from "node:crypto";
import type { PaymentRequiredContext, ResourceServerExtension } from "@x402/core/types";
import { DEFAULT_AGENT_OWNERSHIP_SCHEMA, HUMAN_PROOF } from "../shared/constants";
import type { HumanProofChallenge, HumanProofExtensionInfo } from "../shared/types";
import { buildHumanProofSchema } from "./challenge-schema";
import { type DeclareHumanProofOptions, isHumanProofDeclaration } from "./declare";

export type CreateHumanProofExtensionOptions = {
  /** Must match the verifier's ownership schema when customised. */
  agentOwnershipSchema?: string;
};

/** Info fields regenerated for every 402, hence excluded from x402's echo comparison. */
export const HUMAN_PROOF_DYNAMIC_INFO_FIELDS = ["nonce", "issuedAt", "expirationTime"];

// x402 replaces the declaration with the issued challenge inside the request's extensions map, and later
// 402s of the same request receive that challenge as their "declaration": remember the options behind it.
const optionsOfIssuedChallenge = new WeakMap<object, DeclareHumanProofOptions>();

function declaredOptions(declaration: unknown): DeclareHumanProofOptions {
  if (isHumanProofDeclaration(declaration)) return declaration._options;
  if (typeof declaration === "object" && declaration !== null)
    return optionsOfIssuedChallenge.get(declaration) ?? {};
  return {};
}

/** The `domain` and `uri` this server expects a proof to be signed for, from the declaration and the resource URL. */
export function expectedSigningTerms(
  declaration: unknown,
  resourceUrl: string,
): { domain: string; uri: string } {
  const issued = (declaration as { info?: Partial<HumanProofExtensionInfo> } | null)?.info;
  if (issued && typeof issued.domain === "string" && typeof issued.uri === "string") {
    return { domain: issued.domain, uri: issued.uri };
  }
  const options = declaredOptions(declaration);
  const uri = options.resourceUri ?? resourceUrl;
  return { domain: options.domain ?? domainOf(uri), uri };
}

function domainOf(resourceUri: string): string {
  try {
    return new URL(resourceUri).hostname;
  } catch {
    throw new Error(`cannot derive a domain from "${resourceUri}"; set domain in declareHumanProofExtension`);
  }
}

function challengeFor(
  options: DeclareHumanProofOptions,
  context: PaymentRequiredContext,
  ownershipSchema: string,
): HumanProofChallenge {
  const resourceUri = options.resourceUri ?? context.resourceInfo.url;
  const networks = options.network
    ? [options.network].flat()
    : [...new Set(context.requirements.map((requirement) => requirement.network))];
  // One instant for both times, so the challenge's lifetime is exactly the declared one.
  const issuedAt = Date.now();
  const info: HumanProofExtensionInfo = {
    domain: options.domain ?? domainOf(resourceUri),
    uri: resourceUri,
    version: options.version ?? "1",
    nonce: randomBytes(16).toString("hex"),
    issuedAt: new Date(issuedAt).toISOString(),
    requiredAttestations: [ownershipSchema],
  };
  if (resourceUri) info.resources = [resourceUri];
  if (options.expirationSeconds !== undefined) {
    info.expirationTime = new Date(issuedAt + options.expirationSeconds * 1000).toISOString();
  }
  if (options.statement) info.statement = options.statement;
  const supportedChains = networks
    .filter((network) => network.startsWith("eip155:"))
    .map((chainId) => ({ chainId, type: "eip191" as const }));
  return { info, supportedChains, schema: buildHumanProofSchema() };
}

/**
 * The x402 resource-server extension that turns a route's human-proof declaration into a fresh challenge
 * (new nonce and issue time) in every 402 response.
 */
export function createHumanProofExtension(
  options: CreateHumanProofExtensionOptions = {},
): ResourceServerExtension {
  const ownershipSchema = options.agentOwnershipSchema ?? DEFAULT_AGENT_OWNERSHIP_SCHEMA;
  return {
    key: HUMAN_PROOF,
    dynamicInfoFields: HUMAN_PROOF_DYNAMIC_INFO_FIELDS,
    enrichPaymentRequiredResponse: async (declaration, context) => {
      const options = declaredOptions(declaration);
      const challenge = challengeFor(options, context, ownershipSchema);
      optionsOfIssuedChallenge.set(challenge, options);
      return challenge;
    },
  };
}
