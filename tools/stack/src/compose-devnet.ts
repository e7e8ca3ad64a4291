import { execFileSync } from "node:child_process";
import { REPO_ROOT } from "./processes";

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

/** The devnet's summary from its container log (COMPOSE_CMD, project from COMPOSE_PROJECT_NAME); undefined before it is ready. */
export function devnetSummary(): DevnetSummary | undefined {
  const [cmd, ...args] = (process.env.COMPOSE_CMD || "docker-compose").split(" ");
  const logs = execFileSync(cmd!, [...args, "logs", "--no-color", "devnet"], {
    cwd: REPO_ROOT,
    encoding: "utf8",
    maxBuffer: 64 << 20,
  });
  const line = logs.split("\n").find((l) => l.includes('"msg":"devnet ready"'));
  return line ? (JSON.parse(line.slice(line.indexOf("{"))) as DevnetSummary) : undefined;
}
