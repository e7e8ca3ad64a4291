import type { NetworkSettings } from "./config.ts";
import { iden3Auth } from "./verification/iden3-modules.ts";
import type { StateResolver, StateResolvers } from "./verification/token-verifier.ts";

/**
 * The iden3 State contract of each configured Billions network, read over its RPC (with the library's caches).
 * Built in each verification thread, which has the iden3 libraries loaded anyway, so the main thread never loads
 * them (see the verification pool's `chains`).
 */
export function chainStateResolvers(networks: Record<string, NetworkSettings>): StateResolvers {
  return Object.fromEntries(
    Object.entries(networks).map(([network, settings]): [string, StateResolver] => [
      network,
      new iden3Auth.resolver.EthStateResolver(settings.rpcUrl, settings.stateContract),
    ]),
  );
}
