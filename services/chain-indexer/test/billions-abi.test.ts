import { readFileSync } from "node:fs";
import { ABIs } from "@humanpass/devnet";
import { describe, expect, it } from "vitest";
import { attestationRegistryAbi, legacySchemaRegisteredAbi, recordAttestationAbi } from "../src/chain/abi.ts";

interface AbiParameter {
  type: string;
  name?: string;
  indexed?: boolean;
  components?: readonly AbiParameter[];
}
interface AbiItem {
  type: string;
  name?: string;
  inputs?: readonly AbiParameter[];
  outputs?: readonly AbiParameter[];
}

/** Billions' published ABI (older revision), provenance in fixtures/billions-abi/README.md. */
function billions(contract: "SchemaRegistry" | "AttestationRegistry"): AbiItem[] {
  return JSON.parse(readFileSync(new URL(`fixtures/billions-abi/${contract}.json`, import.meta.url), "utf8"));
}

/** What decoding depends on: types with tuples expanded, indexed flags, outputs. Names are left out. */
function shape(item: AbiItem): string {
  const param = (p: AbiParameter): string => {
    const type = p.type.startsWith("tuple")
      ? `(${(p.components ?? []).map(param).join(",")})${p.type.slice("tuple".length)}`
      : p.type;
    return p.indexed ? `${type} indexed` : type;
  };
  const outputs = item.outputs ? ` returns (${item.outputs.map(param).join(",")})` : "";
  return `${item.type} ${item.name}(${(item.inputs ?? []).map(param).join(",")})${outputs}`;
}

function named(abi: readonly AbiItem[], type: string, name: string): string {
  const found = abi.filter((item) => item.type === type && item.name === name);
  expect(found, `${type} ${name}`).toHaveLength(1);
  return shape(found[0]);
}

const schemaRegistry = billions("SchemaRegistry");
const attestationRegistry = billions("AttestationRegistry");

describe("the indexer decodes what Billions' registries emit", () => {
  it.each([
    ["Registered (a schema without name)", legacySchemaRegisteredAbi, schemaRegistry, "event", "Registered"],
    ["AttestationRecorded", attestationRegistryAbi, attestationRegistry, "event", "AttestationRecorded"],
    ["AttestationRevoked", attestationRegistryAbi, attestationRegistry, "event", "AttestationRevoked"],
    ["getAttestation", attestationRegistryAbi, attestationRegistry, "function", "getAttestation"],
    [
      "recordAttestation calldata",
      recordAttestationAbi,
      attestationRegistry,
      "function",
      "recordAttestation",
    ],
  ] as const)("%s", (_, ours, theirs, type, name) => {
    expect(named(ours as readonly AbiItem[], type, name)).toBe(named(theirs, type, name));
  });
});

describe("the devnet stands in for Billions' registries", () => {
  // Ownership, initialisation and the iden3 auth verifier are the deployment's administration, which the devnet
  // leaves out (anyone may register and record there); getAttestationsByUserDid is a query humanpass never makes.
  const notOnDevnet = new Set([
    "Initialized",
    "OwnershipTransferStarted",
    "OwnershipTransferred",
    "SchemaRegistryUpdated",
    "acceptOwnership",
    "getAuthVerifierAddress",
    "initialize",
    "owner",
    "pendingOwner",
    "renounceOwnership",
    "setAuthVerifier",
    "setSchemaRegistry",
    "transferOwnership",
    "getAttestationsByUserDid",
  ]);
  const compared = (abi: AbiItem[]) =>
    abi.filter((item) => ["event", "function"].includes(item.type) && !notOnDevnet.has(item.name ?? ""));

  it.each([
    [
      "LegacySchemaRegistry",
      ABIs.legacySchemaRegistry,
      schemaRegistry,
      ["Registered", "register", "getSchema"],
    ],
    [
      "AttestationRegistry",
      ABIs.attestationRegistry,
      attestationRegistry,
      [
        "AttestationRecorded",
        "AttestationRevoked",
        "recordAttestation",
        "revokeAttestation",
        "getAttestation",
      ],
    ],
  ] as const)(
    "%s has every event and call of Billions' ABI, with the same types",
    (_, devnet, theirs, used) => {
      const ours = new Set((devnet as readonly AbiItem[]).map(shape));
      const expected = compared(theirs);
      expect(expected.map((item) => item.name)).toEqual(expect.arrayContaining([...used]));
      expect(expected.map(shape).filter((s) => !ours.has(s))).toEqual([]);
    },
  );
});
