// A Fastify server paid through @humanpass/x402-fastify, with @humanpass/human-proof/server on its resource server.
import {
  configureHumanProofServer,
  InMemoryHumanUsageStorage,
  InMemoryNonceStore,
} from "@humanpass/human-proof/server";
import { createEvmFacilitatorClient, installPaymentGate } from "@humanpass/x402-fastify";
import { x402HTTPResourceServer, x402ResourceServer } from "@x402/core/server";
import Fastify from "fastify";
import { defineChain } from "viem";
import { devnetScheme, humanProofOptions, weatherRoute } from "./routes.mjs";

const env = process.env;
const network = `eip155:${env.CHAIN_ID}`;
const chain = defineChain({
  id: Number(env.CHAIN_ID),
  name: "devnet",
  nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
  rpcUrls: { default: { http: [env.RPC_URL] } },
});
const facilitator = createEvmFacilitatorClient({
  rpcUrl: env.RPC_URL,
  chain,
  privateKey: env.FACILITATOR_KEY,
});

const resourceServer = new x402ResourceServer(facilitator).register(network, devnetScheme(env));
configureHumanProofServer(
  resourceServer,
  humanProofOptions(env, new InMemoryHumanUsageStorage(), new InMemoryNonceStore()),
);

const app = Fastify();
await installPaymentGate(app, {
  publicUrl: env.PUBLIC_URL,
  httpServer: new x402HTTPResourceServer(resourceServer, { "GET /weather": weatherRoute(env) }),
});
app.get("/weather", async () => ({ city: "Zurich", temperatureC: 7 }));
await app.listen({ port: Number(env.PORT), host: "127.0.0.1" });
process.stdout.write(`listening ${env.PUBLIC_URL}\n`);
process.on("SIGTERM", () => app.close().then(() => process.exit(0)));
