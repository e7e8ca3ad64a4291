import type { HTTPTransportContext } from "@x402/core/server";
import type { PaymentRequiredContext, ResourceServerExtension } from "@x402/core/types";
import { DEFAULT_AGENT_OWNERSHIP_SCHEMA, HUMAN_PROOF } from "../common/constants.ts";
import type { HumanProofChallenge, HumanProofExtensionInfo } from "../common/types.ts";
import { type ChallengeNonces, createChallengeNonces } from "./challenge-nonces.ts";
import { buildHumanProofSchema } from "./challenge-schema.ts";
import { type DeclareHumanProofOptions, isHumanProofDeclaration } from "./declare.ts";

export type CreateHumanProofExtensionOptions = {
  /** Must match the verifier's ownership schema when customised. */
  agentOwnershipSchema?: string;
  /** Issues the challenge nonces; must be the hook's. Default: nonces only this process recognises. */
  challengeNonces?: ChallengeNonces;
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

/** What this server expects a proof to be signed for. */
export type ExpectedSigningTerms = {
  domain: string;
  uri: string;
  version: string;
  /** CAIP-2 chains offered for eip191 signing; undefined when no challenge was issued into the declaration. */
  chains: string[] | undefined;
  /** The route lets another address than the proof's signer pay (`payerMayDifferFromSigner`). */
  payerMayDiffer: boolean;
};

/**
 * The terms this server expects a proof to be signed for: those of the challenge it issued for this request
 * (x402 issues one into the declaration on every request), else the declaration's options and `resourceUrl`.
 */
export function expectedSigningTerms(declaration: unknown, resourceUrl: string): ExpectedSigningTerms {
  const options = declaredOptions(declaration);
  const payerMayDiffer = options.payerMayDifferFromSigner === true;
  const issued = declaration as Partial<HumanProofChallenge> | null;
  const info = issued?.info;
  if (info && typeof info.domain === "string" && typeof info.uri === "string") {
    const chains = Array.isArray(issued.supportedChains)
      ? issued.supportedChains.filter((c) => c.type === "eip191").map((c) => c.chainId)
      : [];
    return { domain: info.domain, uri: info.uri, version: info.version ?? "1", chains, payerMayDiffer };
  }
  const uri = options.resourceUri ?? resourceUrl;
  const chains = options.network ? [options.network].flat() : undefined;
  return {
    domain: options.domain ?? domainOf(uri),
    uri,
    version: options.version ?? "1",
    chains,
    payerMayDiffer,
  };
}

function domainOf(resourceUri: string): string {
  try {
    return new URL(resourceUri).hostname;
  } catch {
    throw new Error(`cannot derive a domain from "${resourceUri}"; set domain in declareHumanProofExtension`);
  }
}

/** A challenge as a 402 sends it (`HumanProofChallenge`), or one that is never sent and so carries no nonce. */
type IssuedChallenge = Omit<HumanProofChallenge, "info"> & {
  info: Omit<HumanProofExtensionInfo, "nonce"> & { nonce?: string };
};

/** A challenge as a 402 sends it, or without its nonce where none will be sent (`nonces` undefined). */
function challengeFor(
  options: DeclareHumanProofOptions,
  context: PaymentRequiredContext,
  ownershipSchema: string,
  nonces: ChallengeNonces | undefined,
): IssuedChallenge {
  const resourceUri = options.resourceUri ?? context.resourceInfo.url;
  const networks = options.network
    ? [options.network].flat()
    : [...new Set(context.requirements.map((requirement) => requirement.network))];
  // One instant for both times, so the challenge's lifetime is exactly the declared one.
  const issuedAt = Date.now();
  const terms = { domain: options.domain ?? domainOf(resourceUri), uri: resourceUri };
  const info: IssuedChallenge["info"] = {
    domain: terms.domain,
    uri: resourceUri,
    version: options.version ?? "1",
    ...(nonces ? { nonce: nonces.issue(terms, issuedAt) } : {}),
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
 * Whether this is the payment-required response x402's HTTP server builds for a request that came with a payment,
 * before anything was refused: it matches the payment against that response, and never sends it (every 402 it
 * sends later in the request is built again, with an error, and receives the challenge issued here as its
 * declaration). Its challenge needs no nonce: the nonce is a dynamic field, outside x402's echo comparison, and
 * issuing one (random bytes and an HMAC) was most of the extension's cost on every paid request.
 */
function paymentArrived(declaration: unknown, context: PaymentRequiredContext): boolean {
  const request = (context.transportContext as HTTPTransportContext | undefined)?.request;
  return (
    context.error === undefined &&
    isHumanProofDeclaration(declaration) &&
    Boolean(request?.adapter.getHeader("payment-signature"))
  );
}

/**
 * The x402 resource-server extension that turns a route's human-proof declaration into a fresh challenge
 * (new nonce and issue time) in every 402 response. The nonce carries its issue time and is bound to it and to the
 * challenge's domain and uri, so the hook accepts only nonces this server issued for the terms it expects.
 */
export function createHumanProofExtension(
  options: CreateHumanProofExtensionOptions = {},
): ResourceServerExtension {
  const ownershipSchema = options.agentOwnershipSchema ?? DEFAULT_AGENT_OWNERSHIP_SCHEMA;
  const nonces = options.challengeNonces ?? createChallengeNonces();
  return {
    key: HUMAN_PROOF,
    dynamicInfoFields: HUMAN_PROOF_DYNAMIC_INFO_FIELDS,
    enrichPaymentRequiredResponse: async (declaration, context) => {
      const options = declaredOptions(declaration);
      const challenge = challengeFor(
        options,
        context,
        ownershipSchema,
        paymentArrived(declaration, context) ? undefined : nonces,
      );
      optionsOfIssuedChallenge.set(challenge, options);
      return challenge;
    },
  };
}
