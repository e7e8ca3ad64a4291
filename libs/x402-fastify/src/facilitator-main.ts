#!/usr/bin/env node
/**
 * `humanpass-evm-facilitator`: the x402 facilitator HTTP API (`facilitatorRoutes`) over x402's EVM facilitator
 * (`createEvmFacilitatorClient`), for a chain no public facilitator serves (a devnet, a private chain). Settings
 * from the environment: RPC_URL, CHAIN_ID and FACILITATOR_PRIVATE_KEY (the account that settles and pays gas),
 * PORT (4022), HOST (127.0.0.1), LOG_LEVEL (info). `GET /readyz` answers 200 once it serves, for health checks.
 * One process per settling account: its nonces are handed out here, never re-read.
 */
import Fastify from "fastify";
import { defineChain, type Hex } from "viem";
import { createEvmFacilitatorClient } from "./evm-facilitator.ts";
import { facilitatorRoutes } from "./facilitator-routes.ts";

const env = process.env;
const problems = [
  ...["RPC_URL", "FACILITATOR_PRIVATE_KEY"].filter((name) => !env[name]).map((name) => `${name} is not set`),
  ...(/^[1-9]\d*$/.test(env.CHAIN_ID ?? "") ? [] : ["CHAIN_ID must be a chain id"]),
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

const app = Fastify({ logger: { level: env.LOG_LEVEL ?? "info" } });
app.get("/readyz", async () => ({ status: "ready" }));
await app.register(facilitatorRoutes, { facilitator });
await app.listen({ port: Number(env.PORT ?? 4022), host: env.HOST ?? "127.0.0.1" });
app.log.info({ network: `eip155:${chain.id}`, settler: facilitator.address }, "facilitator ready");
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.once(signal, () => void app.close().then(() => process.exit(0)));
