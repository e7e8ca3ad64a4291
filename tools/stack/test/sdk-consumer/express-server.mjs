// An Express server paid through @x402/express, with @humanpass/human-proof/server on its x402ResourceServer and a
// facilitator of its own (x402's, EVM exact scheme) that settles on the chain at RPC_URL.
import {
  configureHumanProofServer,
  InMemoryHumanUsageStorage,
  InMemoryNonceStore,
} from "@humanpass/human-proof/server";
import { x402Facilitator } from "@x402/core/facilitator";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { registerExactEvmScheme as registerFacilitatorScheme } from "@x402/evm/exact/facilitator";
import { ExactEvmScheme } from "@x402/evm/exact/server";
import { paymentMiddleware, x402ResourceServer } from "@x402/express";
import express from "express";
import { createWalletClient, defineChain, http, publicActions } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { humanProofOptions, weatherRoute } from "./routes.mjs";

const env = process.env;
const network = `eip155:${env.CHAIN_ID}`;
const chain = defineChain({
  id: Number(env.CHAIN_ID),
  name: "devnet",
  nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
  rpcUrls: { default: { http: [env.RPC_URL] } },
});
const wallet = createWalletClient({
  account: privateKeyToAccount(env.FACILITATOR_KEY),
  chain,
  transport: http(env.RPC_URL),
}).extend(publicActions);
const facilitator = new x402Facilitator();
registerFacilitatorScheme(facilitator, {
  signer: toFacilitatorEvmSigner({
    address: wallet.account.address,
    readContract: (args) => wallet.readContract(args),
    verifyTypedData: (args) => wallet.verifyTypedData(args),
    writeContract: (args) => wallet.writeContract(args),
    sendTransaction: (args) => wallet.sendTransaction(args),
    waitForTransactionReceipt: (args) => wallet.waitForTransactionReceipt(args),
    getCode: (args) => wallet.getCode(args),
  }),
  networks: [network],
});
const facilitatorClient = {
  verify: (payload, requirements) => facilitator.verify(payload, requirements),
  settle: (payload, requirements) => facilitator.settle(payload, requirements),
  getSupported: async () => facilitator.getSupported(),
};

const resourceServer = new x402ResourceServer(facilitatorClient).register(network, new ExactEvmScheme());
configureHumanProofServer(
  resourceServer,
  humanProofOptions(env, new InMemoryHumanUsageStorage(), new InMemoryNonceStore()),
);

const app = express();
app.use(paymentMiddleware({ "GET /weather": weatherRoute(env) }, resourceServer));
app.get("/weather", (_req, res) => res.json({ city: "Zurich", temperatureC: 7 }));
const server = app.listen(Number(env.PORT), "127.0.0.1", () => {
  process.stdout.write(`listening http://127.0.0.1:${server.address().port}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
