import { parseUnits } from "viem";

/** An EIP-3009 dollar stablecoin x402 does not know by default (a devnet's or a testnet's USDC). */
export interface Stablecoin {
  /** CAIP-2 network, `eip155:<chain id>`. */
  network: string;
  /** Token contract address. */
  asset: string;
  /** The token's EIP-712 domain name and version (what `transferWithAuthorization` signatures are made for). */
  name: string;
  version: string;
  /** Default 6, as USDC. */
  decimals?: number;
}

type AssetAmount = { amount: string; asset: string; extra: Record<string, unknown> };

/**
 * A money parser for `@x402/evm`'s `ExactEvmScheme.registerMoneyParser`: dollar prices (`price: "$0.01"`) on
 * `token.network` are paid in `token`. x402 knows the USDC of public networks only; other networks need this.
 */
export function stablecoinMoneyParser(
  token: Stablecoin,
): (amount: string | number, network: string) => Promise<AssetAmount | null> {
  const decimals = token.decimals ?? 6;
  return async (amount, network) =>
    network === token.network
      ? {
          amount: parseUnits(String(amount), decimals).toString(),
          asset: token.asset,
          extra: { name: token.name, version: token.version },
        }
      : null;
}
