export const CONTRACTS_DIR = new URL("../contracts/", import.meta.url).pathname;
export const ARTIFACTS_DIR = new URL("../artifacts/", import.meta.url).pathname;
export const HARDHAT_CONFIG = new URL("../hardhat.config.cjs", import.meta.url).pathname;

/** The contracts we deploy, by artifact name (file `contracts/<name>.sol`, contract `<name>`). */
export const CONTRACT_NAMES = [
  "SchemaRegistry",
  "LegacySchemaRegistry",
  "AttestationRegistry",
  "TestUSDC",
  "Multicall3",
] as const;
export type ContractName = (typeof CONTRACT_NAMES)[number];

export interface Artifact {
  contractName: ContractName;
  compiler: string;
  abi: unknown[];
  bytecode: `0x${string}`;
  deployedBytecode: `0x${string}`;
}
