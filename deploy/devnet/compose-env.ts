import type { DemoSeed, Devnet } from "@humanpass/devnet";

/**
 * The devnet-derived settings of the services in docker-compose.yml. The devnet is deterministic (same keys,
 * same deployment order), so compose can carry them literally; a test starts a devnet and compares.
 */
export function composeDevnetEnv(devnet: Devnet, seed: DemoSeed): Record<string, Record<string, string>> {
  const { addresses } = devnet;
  return {
    "chain-indexer": {
      CHAIN_ID: String(devnet.chainId),
      ATTESTATION_REGISTRY_ADDRESS: addresses.attestationRegistry,
      SCHEMA_REGISTRY_ADDRESSES: `${addresses.schemaRegistry},${addresses.legacySchemaRegistry}`,
      MULTICALL_ADDRESS: addresses.multicall3,
    },
    "agent-auth": { OWNERSHIP_SCHEMA_ID: seed.schemas.agentOwnership },
    "payment-gateway": {
      // Accounts 8 and 9, as `make up` uses them: seedDemo's humans and agents are accounts 1–7.
      EVM_ADDRESS: devnet.accounts[9]!.address,
      FACILITATOR_PRIVATE_KEY: devnet.accounts[8]!.privateKey,
      AGENT_OWNERSHIP_SCHEMA: seed.schemas.agentOwnership,
    },
    // Account 12, as `make up`'s facilitator: an account no other process sends from.
    facilitator: {
      CHAIN_ID: String(devnet.chainId),
      FACILITATOR_PRIVATE_KEY: devnet.accounts[12]!.privateKey,
    },
  };
}
