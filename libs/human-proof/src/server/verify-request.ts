import { didFromAddress } from "@humanpass/identity";
import { isAddress } from "viem";
import { boundedMemo } from "../common/bounded-memo.ts";
import { formatSIWEMessage } from "../common/message.ts";
import { recoverMessageSigner } from "../common/recover-signer.ts";
import type { HumanProofPayload } from "../common/types.ts";
import type { HumanResolution, OnHumanProofEvent, PoUVerifier } from "./types.ts";

export type HumanProofRefusalReason =
  | "missing_header"
  | "invalid_header"
  | "invalid_message"
  | "resource_mismatch"
  | "invalid_issued_at"
  | "invalid_expiration_time"
  | "message_expired"
  | "invalid_signature_type"
  | "invalid_signature"
  | "not_registered";

export type HumanProofRequestContext = {
  /** The resource URL being accessed; the signed `uri` must equal it exactly. */
  resource: string;
  /** The proof JSON text (`HUMAN-PROOF` header or x402 `extensions["human-proof"]`), or null when absent. */
  humanProofHeader: string | null;
  /** Receives `human_verified` and `human_not_registered`. */
  onEvent?: OnHumanProofEvent;
};

export type HumanProofRequestResult =
  | HumanProofAllowed
  | { allowed: false; reason: HumanProofRefusalReason; did?: string };
export type HumanProofAllowed = { allowed: true; did: string; chainId: string; resolution: HumanResolution };

/** A check run once the signature is proven and before the registry is asked; returns a refusal reason or nothing. */
export type ProofCheck<Reason extends string> = (
  proof: HumanProofPayload,
  signerAddress: `0x${string}`,
) => Promise<Reason | undefined>;

type Refusal<Reason extends string> = {
  allowed: false;
  reason: HumanProofRefusalReason | Reason;
  did?: string;
};

const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;
const SIGNATURE = /^0x[0-9a-fA-F]{130}$/;

export function parseIsoDate(value: string): number | null {
  if (!ISO_8601.test(value)) return null;
  const millis = Date.parse(value);
  return Number.isNaN(millis) ? null : millis;
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === "string" && value !== "";
}

// A line break inside a field would let one signed text be split into different field values.
function isSingleLine(value: unknown): boolean {
  return value === undefined || (typeof value === "string" && !/[\r\n]/.test(value));
}

/**
 * The proof fields of a `HUMAN-PROOF` header, unverified (for reading the nonce before verification).
 * Throws when the text is not JSON or lacks `address`, `signature`, `chainId` or `type`.
 */
export function parseHumanProofHeader(headerValue: string): HumanProofPayload {
  const proof = parseProof(headerValue);
  if (!proof)
    throw new Error("not a human proof: JSON object with address, signature, chainId and type expected");
  return proof;
}

function parseProof(text: string): HumanProofPayload | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) return null;
  const proof = parsed as Record<string, unknown>;
  if (![proof.address, proof.signature, proof.chainId, proof.type].every(isNonEmptyString)) return null;
  return proof as unknown as HumanProofPayload;
}

function messageProblem(proof: HumanProofPayload, resource: string): HumanProofRefusalReason | undefined {
  const { domain, version, nonce, issuedAt, uri, statement, expirationTime, resources } = proof;
  if (![domain, version, nonce, issuedAt].every(isNonEmptyString)) return "invalid_message";
  if (![statement, expirationTime].every((v) => v === undefined || typeof v === "string"))
    return "invalid_message";
  if (
    resources !== undefined &&
    !(Array.isArray(resources) && resources.every((r) => typeof r === "string"))
  ) {
    return "invalid_message";
  }
  const singleLineFields = [
    domain,
    version,
    nonce,
    issuedAt,
    uri,
    statement,
    expirationTime,
    proof.chainId,
    proof.address,
  ];
  if (!singleLineFields.every(isSingleLine) || !(resources ?? []).every(isSingleLine))
    return "invalid_message";
  if (!isNonEmptyString(uri)) return "resource_mismatch";
  if (!URL.canParse(uri)) return "invalid_message";
  if (uri !== resource) return "resource_mismatch";
  if (parseIsoDate(issuedAt) === null) return "invalid_issued_at";
  if (expirationTime !== undefined) {
    const expiresAt = parseIsoDate(expirationTime);
    if (expiresAt === null) return "invalid_expiration_time";
    if (expiresAt <= Date.now()) return "message_expired";
  }
  return undefined;
}

type Recovery = { signer: `0x${string}` } | { refusal: HumanProofRefusalReason };

async function recoverSigner(proof: HumanProofPayload): Promise<Recovery> {
  // ed25519 is a recognised type, but the agent DID is derived from an EVM address, so it cannot be honoured.
  if (proof.type === "ed25519") return { refusal: "invalid_signature" };
  if (proof.type !== "eip191") return { refusal: "invalid_signature_type" };
  if (!SIGNATURE.test(proof.signature) || !isAddress(proof.address, { strict: false })) {
    return { refusal: "invalid_signature" };
  }
  const signer = await recoverMessageSigner(formatSIWEMessage(proof), proof.signature);
  return signer && signer.toLowerCase() === proof.address.toLowerCase()
    ? { signer }
    : { refusal: "invalid_signature" };
}

// Deriving a DID costs a good tenth of a millisecond, and the same agents pay again and again.
const mainnetDidOf = boundedMemo((address) => didFromAddress(address, "main"), 10_000);

/** The agent DID is always derived from the recovered signer; a DID the caller sends is never read. */
export function agentDidFromAddress(address: string): string {
  // Address-derived DIDs carry the `main` label on production and testnet alike (spec 2).
  return mainnetDidOf(address.toLowerCase());
}

export async function verifyProof<Reason extends string = never>(
  verifier: PoUVerifier,
  context: HumanProofRequestContext,
  extraCheck?: ProofCheck<Reason>,
): Promise<HumanProofAllowed | Refusal<Reason>> {
  const { resource, humanProofHeader, onEvent } = context;
  if (!humanProofHeader) return { allowed: false, reason: "missing_header" };
  const proof = parseProof(humanProofHeader);
  if (!proof) return { allowed: false, reason: "invalid_header" };
  const problem = messageProblem(proof, resource);
  if (problem) return { allowed: false, reason: problem };
  const recovery = await recoverSigner(proof);
  if ("refusal" in recovery) return { allowed: false, reason: recovery.refusal };
  const refusal = await extraCheck?.(proof, recovery.signer);
  if (refusal) return { allowed: false, reason: refusal };

  const did = agentDidFromAddress(recovery.signer);
  const resolution = await verifier.lookupHuman(did, proof.chainId);
  if (!resolution) {
    await onEvent?.({ type: "human_not_registered", resource, did });
    return { allowed: false, reason: "not_registered", did };
  }
  await onEvent?.({ type: "human_verified", resource, ...resolution });
  return { allowed: true, did, chainId: proof.chainId, resolution };
}

/**
 * Checks a signed human proof for `resource`: message fields, `uri`, dates and expiry, signature type,
 * EIP-191 recovery, then the human behind the DID derived from the recovered address.
 * Throws when the attestations or nullifier API errors or cannot be reached: treat that as not verified.
 * Nonce single use and `domain` are the caller's duty (the x402 hook of this package does both).
 */
export function verifyHumanProofRequest(
  verifier: PoUVerifier,
  context: HumanProofRequestContext,
): Promise<HumanProofRequestResult> {
  return verifyProof(verifier, context);
}
