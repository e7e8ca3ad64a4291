import type { VerificationSettings } from "./config.ts";
import type { ResolvedState, StateResolver, StateResolvers } from "./verification/token-verifier.ts";

/**
 * The iden3 State contract of each configured Billions network, read over its RPC (with the library's caches).
 * The iden3 libraries are imported when needed, not with this module: main.ts loads them beside the worker
 * threads instead of before them.
 */
export function chainStateResolvers(networks: VerificationSettings["networks"]): StateResolvers {
  return Object.fromEntries(
    Object.entries(networks).map(([network, settings]): [string, StateResolver] => {
      let resolver: Promise<StateResolver> | undefined;
      const load = () => {
        resolver ??= import("./verification/iden3-modules.ts").then(
          ({ iden3Auth }) => new iden3Auth.resolver.EthStateResolver(settings.rpcUrl, settings.stateContract),
        );
        return resolver;
      };
      return [
        network,
        {
          resolve: async (id, state): Promise<ResolvedState> => (await load()).resolve(id, state),
          rootResolve: async (state): Promise<ResolvedState> => (await load()).rootResolve(state),
        },
      ];
    }),
  );
}
