import { type Address, type Chain, defineChain } from "viem";

export const DEVNET_CHAIN_ID = 45056;

/** Where every public chain has Multicall3; the devnet puts its own copy there. */
export const MULTICALL3_ADDRESS: Address = "0xcA11bde05977b3631167028862bE2a173976CA11";

/** The viem chain of a devnet listening at `rpcUrl` (chain id 45056, as Billions main). */
export function devnetChain(rpcUrl: string): Chain {
  return defineChain({
    id: DEVNET_CHAIN_ID,
    name: "Billions devnet",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
    contracts: { multicall3: { address: MULTICALL3_ADDRESS } },
  });
}
