import { x402Facilitator } from "@x402/core/facilitator";
import type { FacilitatorClient } from "@x402/core/server";
import type { Network } from "@x402/core/types";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { registerExactEvmScheme } from "@x402/evm/exact/facilitator";
import { type Chain, createWalletClient, type Hex, http, publicActions } from "viem";
import { nonceManager, privateKeyToAccount } from "viem/accounts";
import { createInProcessFacilitatorClient } from "./facilitators";
import { inOrder } from "./in-order";

export interface EvmFacilitatorOptions {
  rpcUrl: string;
  chain: Chain;
  /** Key of the account that submits settlements and pays their gas. */
  privateKey: Hex;
  /** CAIP-2 networks it settles on; default the chain's own. */
  networks?: Network[];
  confirmationTimeoutMs?: number;
  /** Per RPC call; default 30 s (viem's 10 s is short for a busy node). */
  rpcTimeoutMs?: number;
}

/**
 * x402's own facilitator with the EVM `exact` scheme, in this process, settling through `rpcUrl` (the devnet
 * locally). Concurrent settlements share one account, so its nonces are handed out locally, not re-read, and
 * its transactions are signed and broadcast one at a time: a node takes an account's transactions only in
 * nonce order (Hardhat's automine refuses a nonce above the next one outright), and concurrent sends overtake
 * each other on the way. Receipts are still awaited concurrently. One account per process: two processes
 * sending from one account would hand out the same nonces.
 */
export function createEvmFacilitatorClient(
  options: EvmFacilitatorOptions,
): FacilitatorClient & { address: Hex } {
  const account = privateKeyToAccount(options.privateKey, { nonceManager });
  const client = createWalletClient({
    account,
    chain: options.chain,
    transport: http(options.rpcUrl, { timeout: options.rpcTimeoutMs ?? 30_000 }),
  }).extend(publicActions);
  const broadcast = inOrder();
  const signer = toFacilitatorEvmSigner(
    {
      address: account.address,
      readContract: (args) => client.readContract(args as Parameters<typeof client.readContract>[0]),
      verifyTypedData: (args) => client.verifyTypedData(args as Parameters<typeof client.verifyTypedData>[0]),
      writeContract: (args) =>
        broadcast(() => client.writeContract(args as Parameters<typeof client.writeContract>[0])),
      sendTransaction: (args) => broadcast(() => client.sendTransaction(args)),
      waitForTransactionReceipt: (args) => client.waitForTransactionReceipt({ ...args, pollingInterval: 50 }),
      getCode: (args) => client.getCode(args),
    },
    { confirmationTimeoutMs: options.confirmationTimeoutMs },
  );
  const facilitator = new x402Facilitator();
  registerExactEvmScheme(facilitator, {
    signer,
    networks: options.networks ?? [`eip155:${options.chain.id}`],
  });
  return { ...createInProcessFacilitatorClient(facilitator), address: account.address };
}
