export { ABIs } from "./artifacts.ts";
export { DEVNET_CHAIN_ID, devnetChain, MULTICALL3_ADDRESS } from "./chain.ts";
export { blockNumber, ensureSender, mine, revert, setAutomine, snapshot } from "./control.ts";
export {
  connectDevnet,
  createDevnetClient,
  type Devnet,
  type DevnetAccount,
  type DevnetAddresses,
  type DevnetClient,
  type DevnetInfo,
  devnetInfo,
  type StartDevnetOptions,
  startDevnet,
} from "./devnet.ts";
export {
  type AttestationInput,
  type BatchOptions,
  encodeSchemaData,
  ensureSchema,
  getAttestation,
  getLegacySchema,
  getSchema,
  type Identity,
  type IdentityInput,
  identityFromAddress,
  recordAttestation,
  recordAttestations,
  registerLegacySchema,
  registerSchema,
  revokeAttestation,
  revokeAttestations,
  type SchemaInput,
  type SendOptions,
  schemaIdOf,
  type Transacted,
} from "./registries.ts";
export {
  AGENT_OWNERSHIP_SCHEMA,
  type DemoSeed,
  REVIEW_SCHEMA,
  type SeededAttestation,
  seedDemo,
  seedToJson,
} from "./seed.ts";
