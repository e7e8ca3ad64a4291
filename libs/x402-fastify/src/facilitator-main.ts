#!/usr/bin/env node
/**
 * `humanpass-evm-facilitator`: the x402 facilitator HTTP API (`buildFacilitatorServer`) over x402's EVM facilitator
 * (`createEvmFacilitatorClient`), for a chain no public facilitator serves (a devnet, a private chain). Settings
 * from the environment: RPC_URL, CHAIN_ID and FACILITATOR_PRIVATE_KEY (the account that settles and pays gas),
 * FACILITATOR_API_KEY (required as `Authorization: Bearer …` on /verify and /settle), CHAIN_IS_DEVNET (`true`: the
 * chain is a devnet, and the API key may be left out), PORT (4022), HOST (127.0.0.1), LOG_LEVEL (info),
 * HTTP_REQUEST_TIMEOUT_MS (30000), HTTP_CONNECTION_TIMEOUT_MS (65000). `GET /readyz` answers 200 once it serves.
 * One process per settling account: its nonces are handed out here, never re-read.
 */
import { defineChain, type Hex } from "viem";
import { createEvmFacilitatorClient } from "./evm-facilitator.ts";
import { buildFacilitatorServer } from "./facilitator-server.ts";

const env = process.env;
const apiKey = env.FACILITATOR_API_KEY || undefined;
const isDevnet = env.CHAIN_IS_DEVNET === "true";
const milliseconds = (name: string) =>
  /^[1-9]\d*$/.test(env[name] ?? "") ? [] : [`${name} must be milliseconds`];
const problems = [
  ...["RPC_URL", "FACILITATOR_PRIVATE_KEY"].filter((name) => !env[name]).map((name) => `${name} is not set`),
  ...(/^[1-9]\d*$/.test(env.CHAIN_ID ?? "") ? [] : ["CHAIN_ID must be a chain id"]),
  // Without a key anyone who reaches /settle spends the settler's gas: fine on a devnet only.
  ...(apiKey || isDevnet
    ? []
    : [
        "FACILITATOR_API_KEY is not set: give the key your servers will send (Authorization: Bearer …), or set CHAIN_IS_DEVNET=true if the chain is a devnet",
      ]),
  ...["HTTP_REQUEST_TIMEOUT_MS", "HTTP_CONNECTION_TIMEOUT_MS"]
    .filter((name) => env[name])
    .flatMap(milliseconds),
];
if (problems.length > 0) {
  process.stderr.write(`humanpass-evm-facilitator: ${problems.join("; ")}\n`);
  process.exit(64);
}
const rpcUrl = env.RPC_URL!;
const chain = defineChain({
  id: Number(env.CHAIN_ID),
  name: `eip155:${env.CHAIN_ID}`,
  nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
  rpcUrls: { default: { http: [rpcUrl] } },
});
const facilitator = createEvmFacilitatorClient({
  rpcUrl,
  chain,
  privateKey: env.FACILITATOR_PRIVATE_KEY as Hex,
});

const app = await buildFacilitatorServer({
  facilitator,
  apiKey,
  requestTimeoutMs: env.HTTP_REQUEST_TIMEOUT_MS ? Number(env.HTTP_REQUEST_TIMEOUT_MS) : undefined,
  connectionTimeoutMs: env.HTTP_CONNECTION_TIMEOUT_MS ? Number(env.HTTP_CONNECTION_TIMEOUT_MS) : undefined,
  logger: { level: env.LOG_LEVEL ?? "info" },
});
await app.listen({ port: Number(env.PORT ?? 4022), host: env.HOST ?? "127.0.0.1" });
app.log.info(
  { network: `eip155:${chain.id}`, settler: facilitator.address, apiKeyRequired: Boolean(apiKey) },
  "facilitator ready",
);
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.once(signal, () => void app.close().then(() => process.exit(0)));
