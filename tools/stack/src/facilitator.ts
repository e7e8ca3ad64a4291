import type { Devnet } from "@humanpass/devnet";
import { buildFacilitatorServer, createEvmFacilitatorClient } from "@humanpass/x402-fastify";

export interface DevnetFacilitator {
  url: string;
  /** The account that submits settlements and pays their gas. */
  address: string;
  stop(): Promise<void>;
}

/**
 * The x402 facilitator HTTP API for the devnet (`HTTPFacilitatorClient({ url })` of an integrator's server points
 * here): x402's own EVM facilitator settling from `settler`, an account nobody else sends from, since one
 * account's nonces are handed out by one process.
 */
export async function startDevnetFacilitator(
  devnet: Devnet,
  options: { port: number; host: string; settler: number },
): Promise<DevnetFacilitator> {
  const facilitator = createEvmFacilitatorClient({
    rpcUrl: devnet.rpcUrl,
    chain: devnet.chain,
    privateKey: devnet.accounts[options.settler]!.privateKey,
  });
  // No API key: the devnet's gas is nobody's money.
  const app = await buildFacilitatorServer({ facilitator });
  await app.listen({ port: options.port, host: options.host });
  return {
    url: `http://127.0.0.1:${options.port}`,
    address: facilitator.address,
    stop: () => app.close(),
  };
}
