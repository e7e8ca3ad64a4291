import type { VerificationSettings } from "./config";
import { iden3Auth } from "./verification/iden3-modules";
import type { StateResolvers } from "./verification/token-verifier";

/** The iden3 State contract of each configured Billions network, read over its RPC (with the library's caches). */
export function chainStateResolvers(networks: VerificationSettings["networks"]): StateResolvers {
  return Object.fromEntries(
    Object.entries(networks).map(([network, settings]) => [
      network,
      new iden3Auth.resolver.EthStateResolver(settings.rpcUrl, settings.stateContract),
    ]),
  );
}
