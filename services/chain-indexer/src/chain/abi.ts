import { parseAbi } from "viem";

/** The parts of Billions' registries the indexer reads: both revisions of `Registered`, the attestation events. */
export const schemaRegisteredAbi = parseAbi([
  "struct SchemaRecord { bytes32 id; address resolver; bool revocable; string schema; string name; }",
  "event Registered(bytes32 indexed id, address indexed registerer, uint256 indexed userId, SchemaRecord schema)",
]);

export const legacySchemaRegisteredAbi = parseAbi([
  "struct LegacySchemaRecord { bytes32 id; address resolver; bool revocable; string schema; }",
  "event Registered(bytes32 indexed id, address indexed registerer, uint256 indexed userId, LegacySchemaRecord schema)",
]);

export const attestationRegistryAbi = parseAbi([
  "struct Identity { string did; uint256 iden3Id; address ethereumAddress; }",
  "struct Attestation { bytes32 id; bytes32 schemaId; uint64 creationTime; uint64 expirationTime; uint64 revocationTime; Identity attester; Identity recipient; bool revocable; bytes32 refId; bytes data; }",
  "event AttestationRecorded(bytes32 indexed id, bytes32 indexed schemaId, uint256 attesterIden3Id, string recipientDid, uint256 recipientIden3Id, uint256 timestamp)",
  "event AttestationRevoked(bytes32 indexed id, address indexed revoker, uint256 indexed revokerIden3Id, string recipientDid, uint256 recipientIden3Id)",
  "function getAttestation(bytes32 id) view returns (Attestation)",
]);

/**
 * The registry's recording entry points, whose calldata carries the record: `recordAttestation` (Billions) and
 * `recordAttestations` (the devnet's batch form).
 */
export const recordAttestationAbi = parseAbi([
  "struct Identity { string did; uint256 iden3Id; address ethereumAddress; }",
  "struct AttestationRequest { bytes32 schemaId; Identity attester; Identity recipient; uint256 expirationTime; bool revocable; bytes32 refId; bytes data; }",
  "function recordAttestation(AttestationRequest request) returns (bytes32)",
  "function recordAttestations(AttestationRequest[] requests) returns (bytes32[])",
]);

/** Every event the indexer asks eth_getLogs for; viem picks the ABI item by topic0, so both forms decode. */
export const indexedEventsAbi = [
  ...schemaRegisteredAbi.filter((item) => item.type === "event"),
  ...legacySchemaRegisteredAbi.filter((item) => item.type === "event"),
  ...attestationRegistryAbi.filter((item) => item.type === "event"),
] as const;
