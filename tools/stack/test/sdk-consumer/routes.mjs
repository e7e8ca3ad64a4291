// One paid route, as an integrator would declare it: the standard tier for anyone, a tenth of the price for agents
// that a verified human owns, at most MAX_USE times per human. Dollar prices, paid in the devnet's USDC.
import { declareHumanProofExtension, stablecoinMoneyParser } from "@humanpass/human-proof/server";
import { ExactEvmScheme } from "@x402/evm/exact/server";

export const MAX_USE = 2;

/** x402's EVM server scheme, told that dollars on the devnet are its USDC (x402 knows public networks only). */
export function devnetScheme(env) {
  return new ExactEvmScheme().registerMoneyParser(
    stablecoinMoneyParser({
      network: `eip155:${env.CHAIN_ID}`,
      asset: env.USDC,
      name: "USD Coin",
      version: "2",
    }),
  );
}

export function weatherRoute(env) {
  const network = `eip155:${env.CHAIN_ID}`;
  return {
    accepts: [
      { scheme: "exact", network, payTo: env.PAY_TO, price: "$0.01" },
      {
        scheme: "exact",
        network,
        payTo: env.PAY_TO,
        price: "$0.001",
        extra: { requiredAttestations: [env.OWNERSHIP_SCHEMA], maxUse: MAX_USE, scope: "weather" },
      },
    ],
    description: "Weather now",
    mimeType: "application/json",
    extensions: { "human-proof": declareHumanProofExtension({ expirationSeconds: 900 }) },
  };
}

export function humanProofOptions(env, storage, nonceStore) {
  return {
    verifierOptions: {
      attestationsApiUrl: env.ATTESTATIONS_API_URL,
      agentOwnershipSchema: env.OWNERSHIP_SCHEMA,
    },
    storage,
    nonceStore,
  };
}
