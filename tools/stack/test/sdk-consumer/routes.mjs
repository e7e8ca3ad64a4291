// One paid route, as an integrator would declare it: the standard tier for anyone, a tenth of the price for agents
// that a verified human owns, at most MAX_USE times per human.
import { declareHumanProofExtension } from "@humanpass/human-proof/server";

export const STANDARD = "10000";
export const DISCOUNTED = "1000";
export const MAX_USE = 2;

export function weatherRoute(env) {
  const network = `eip155:${env.CHAIN_ID}`;
  const price = (amount) => ({ amount, asset: env.USDC, extra: { name: "USD Coin", version: "2" } });
  return {
    accepts: [
      { scheme: "exact", network, payTo: env.PAY_TO, price: price(STANDARD) },
      {
        scheme: "exact",
        network,
        payTo: env.PAY_TO,
        price: price(DISCOUNTED),
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
