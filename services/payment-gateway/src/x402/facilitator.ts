import type { Logger } from "@humanpass/telemetry";
import { createEvmFacilitatorClient, createMockFacilitatorClient } from "@humanpass/x402-fastify";
import { type FacilitatorClient, HTTPFacilitatorClient } from "@x402/core/server";
import type { Network } from "@x402/core/types";
import { defineChain, type Hex } from "viem";

export interface FacilitatorChoice {
  FACILITATOR_URL?: string;
  MOCK_FACILITATOR: boolean;
  FACILITATOR_RPC_URL?: string;
  FACILITATOR_PRIVATE_KEY?: string;
}

/**
 * The facilitator the configuration names: the mock (development only, loudly), x402's own in this process
 * settling through an RPC node (`local`, the devnet), or a remote one by URL.
 */
export function createFacilitator(
  choice: FacilitatorChoice,
  networks: Network[],
  logger: Logger,
): FacilitatorClient {
  if (choice.MOCK_FACILITATOR) {
    logger.warn(
      "MOCK_FACILITATOR=true: payments are accepted without on-chain verification or settlement; development only",
    );
    return createMockFacilitatorClient({ kinds: networks.map((network) => ({ network, scheme: "exact" })) });
  }
  if (choice.FACILITATOR_URL === "local") {
    const chainIds = [...new Set(networks.map((n) => Number(n.split(":")[1])))];
    if (chainIds.length !== 1)
      throw new Error(`the local facilitator settles on one chain; the routes use ${networks.join(", ")}`);
    const rpcUrl = choice.FACILITATOR_RPC_URL as string;
    const chain = defineChain({
      id: chainIds[0],
      name: `eip155:${chainIds[0]}`,
      nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
      rpcUrls: { default: { http: [rpcUrl] } },
    });
    const facilitator = createEvmFacilitatorClient({
      rpcUrl,
      chain,
      privateKey: choice.FACILITATOR_PRIVATE_KEY as Hex,
      networks,
    });
    logger.info(
      { rpcUrl, settler: facilitator.address, networks },
      "settling through the in-process facilitator",
    );
    return facilitator;
  }
  return new HTTPFacilitatorClient({ url: choice.FACILITATOR_URL });
}
