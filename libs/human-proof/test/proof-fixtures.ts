import { didFromAddress } from "@humanpass/identity";
import type { PaymentRequirements } from "@x402/core/types";
import { privateKeyToAccount } from "viem/accounts";
import { type EVMSigner, signHumanProofChallengeEVMUnchecked } from "../src/client/sign.ts";
import { DEFAULT_AGENT_OWNERSHIP_SCHEMA } from "../src/common/constants.ts";
import type { HumanProofChallenge, HumanProofExtensionInfo } from "../src/common/types.ts";
import { createChallengeNonces } from "../src/server/challenge-nonces.ts";
import type { HumanResolution, PoUVerifier } from "../src/server/types.ts";

export const RESOURCE = "https://api.example.com/weather?city=Oslo";
export const CHAIN = "eip155:45056";

export function account(n: number): EVMSigner & { address: `0x${string}` } {
  const acct = privateKeyToAccount(`0x${n.toString(16).padStart(64, "0")}`);
  return { address: acct.address, signMessage: (message) => acct.signMessage({ message }) };
}

// Without keys: the nonces this process's hooks recognise by default.
const processNonces = createChallengeNonces();

/** A challenge as this process's server would issue it: its nonce carries its issue time, bound to its domain and uri. */
export function challenge(info: Partial<HumanProofExtensionInfo> = {}): HumanProofChallenge {
  const terms = {
    domain: "api.example.com",
    uri: RESOURCE,
    issuedAt: new Date().toISOString(),
    ...info,
  };
  return {
    info: {
      version: "1",
      resources: [RESOURCE],
      requiredAttestations: [DEFAULT_AGENT_OWNERSHIP_SCHEMA],
      ...terms,
      nonce:
        info.nonce ??
        processNonces.issue({ domain: terms.domain, uri: terms.uri ?? "" }, Date.parse(terms.issuedAt)),
    },
    supportedChains: [{ chainId: CHAIN, type: "eip191" }],
  };
}

export function sign(signer: EVMSigner, info: Partial<HumanProofExtensionInfo> = {}): Promise<string> {
  return signHumanProofChallengeEVMUnchecked(challenge(info), signer, CHAIN);
}

/** Changes fields of a signed proof without signing again. */
export function tamper(proof: string, patch: Record<string, unknown>): string {
  const parsed = { ...JSON.parse(proof), ...patch };
  for (const [key, value] of Object.entries(patch)) if (value === undefined) delete parsed[key];
  return JSON.stringify(parsed);
}

export function resolutionFor(agent: `0x${string}`, humanId = "4242"): HumanResolution {
  return {
    humanId,
    verifiedAt: "2026-01-01T00:00:00.000Z",
    attestationId: `0x${"11".repeat(32)}`,
    humanDid: "did:iden3:billions:main:2VmAkXrihYeF4BBkV7gRKoCHBMBBSCXFHNimULq7Wi",
    humanAddress: "0x000000000000000000000000000000000000dEaD",
    agentDid: didFromAddress(agent, "main"),
    agentAddress: agent,
  };
}

/** An in-process registry: DID → resolution; `failing` makes every lookup throw as an unreachable API would. */
export function registry(
  paired: Record<string, HumanResolution>,
  extraSchemas: Record<string, string[]> = {},
): PoUVerifier & { failing: boolean; lookups: string[] } {
  return {
    ownershipSchema: DEFAULT_AGENT_OWNERSHIP_SCHEMA,
    failing: false,
    lookups: [],
    async lookupHuman(did) {
      this.lookups.push(did);
      if (this.failing) throw new Error("attestations API answered 503");
      return paired[did] ?? null;
    },
    async hasAttestation(did, _chainId, schema) {
      if (this.failing) throw new Error("attestations API answered 503");
      return (extraSchemas[did] ?? []).includes(schema);
    },
  };
}

/** An `exact` tier of 1000 base units on the devnet chain, with `extra` as given. */
export function tier(extra?: Record<string, unknown>): PaymentRequirements {
  return {
    scheme: "exact",
    network: "eip155:45056",
    amount: "1000",
    asset: "0x0000000000000000000000000000000000000001",
    payTo: "0x0000000000000000000000000000000000000002",
    maxTimeoutSeconds: 60,
    extra: extra ?? {},
  };
}
