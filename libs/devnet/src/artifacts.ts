import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  attestationRegistryAbi,
  legacySchemaRegistryAbi,
  multicall3Abi,
  schemaRegistryAbi,
  testUSDCAbi,
} from "./abi.ts";
import { ARTIFACTS_DIR, type Artifact, type ContractName } from "./paths.ts";

/** The ABIs of the devnet contracts, typed for viem. */
export const ABIs = {
  schemaRegistry: schemaRegistryAbi,
  legacySchemaRegistry: legacySchemaRegistryAbi,
  attestationRegistry: attestationRegistryAbi,
  usdc: testUSDCAbi,
  multicall3: multicall3Abi,
} as const;

export function loadArtifact(name: ContractName): Artifact {
  return JSON.parse(readFileSync(join(ARTIFACTS_DIR, `${name}.json`), "utf8")) as Artifact;
}
