import { didFromAddress } from "@humanpass/identity";
import { privateKeyToAccount } from "viem/accounts";
import { type EVMSigner, signHumanProofChallengeEVM } from "../src/client/sign";
import type { HumanResolution, PoUVerifier } from "../src/server/types";
import { DEFAULT_AGENT_OWNERSHIP_SCHEMA } from "../src/shared/constants";
import type { HumanProofChallenge, HumanProofExtensionInfo } from "../src/shared/types";

export const RESOURCE = "https://api.example.com/weather?city=Oslo";
export const CHAIN = "eip155:45056";

export function account(n: number): EVMSigner & { address: `0x${string}` } {
  const acct = privateKeyToAccount(`0x${n.toString(16).padStart(64, "0")}`);
  return { address: acct.address, signMessage: (message) => acct.signMessage({ message }) };
}

export function challenge(info: Partial<HumanProofExtensionInfo> = {}): HumanProofChallenge {
  return {
    info: {
      domain: "api.example.com",
      uri: RESOURCE,
      version: "1",
      nonce: crypto.randomUUID().replaceAll("-", ""),
      issuedAt: new Date().toISOString(),
      resources: [RESOURCE],
      requiredAttestations: [DEFAULT_AGENT_OWNERSHIP_SCHEMA],
      ...info,
    },
    supportedChains: [{ chainId: CHAIN, type: "eip191" }],
  };
}

export function sign(signer: EVMSigner, info: Partial<HumanProofExtensionInfo> = {}): Promise<string> {
  return signHumanProofChallengeEVM(challenge(info), signer, CHAIN);
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
