import { logsOf } from "./compose-test/docker.ts";

/** What the devnet container logs once it is ready (deploy/devnet/serve.ts). */
export interface DevnetSummary {
  chainId: number;
  usdc: string;
  schemaRegistry: string;
  legacySchemaRegistry: string;
  attestationRegistry: string;
  multicall3: string;
  seed: {
    schemas: { agentOwnership: string; review: string };
    humans: { did: string; iden3Id: string; ethereumAddress: string }[];
    pairings: { attester: { did: string; iden3Id: string }; recipient: { ethereumAddress: string } }[];
  };
  accounts: { address: `0x${string}`; privateKey: `0x${string}` }[];
}

/** The devnet's summary from its container's log (project COMPOSE_PROJECT_NAME); undefined before it is ready. */
export async function devnetSummary(): Promise<DevnetSummary | undefined> {
  const logs = await logsOf(process.env.COMPOSE_PROJECT_NAME || "humanpass", "devnet");
  const line = logs.split("\n").find((l) => l.includes('"msg":"devnet ready"'));
  return line ? (JSON.parse(line.slice(line.indexOf("{"))) as DevnetSummary) : undefined;
}
