import { x402Facilitator } from "@x402/core/facilitator";
import type { FacilitatorClient } from "@x402/core/server";
import type { Network } from "@x402/core/types";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { ExactEvmScheme } from "@x402/evm/exact/facilitator";
import { type Chain, createWalletClient, type Hex, http, publicActions } from "viem";
import { nonceManager, privateKeyToAccount } from "viem/accounts";
import { createInProcessFacilitatorClient } from "./facilitators.ts";
import { inOrder } from "./in-order.ts";

const EIP3009_TRANSFERS = new Set(["transferWithAuthorization", "receiveWithAuthorization"]);

const AUTHORIZATION_STATE_ABI = [
  {
    type: "function",
    name: "authorizationState",
    stateMutability: "view",
    inputs: [
      { name: "authorizer", type: "address" },
      { name: "nonce", type: "bytes32" },
    ],
    outputs: [{ type: "bool" }],
  },
] as const;

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
 * each other on the way. Receipts are still awaited concurrently. An EIP-3009 authorization already used on chain
 * is refused before it joins the queue, and nothing in the queue is retried, so a replay holds no one up. One account per process: two processes
 * sending from one account would hand out the same nonces.
 */
export function createEvmFacilitatorClient(
  options: EvmFacilitatorOptions,
): FacilitatorClient & { address: Hex } {
  const account = privateKeyToAccount(options.privateKey, { nonceManager });
  const timeout = options.rpcTimeoutMs ?? 30_000;
  const client = createWalletClient({
    account,
    chain: options.chain,
    transport: http(options.rpcUrl, { timeout }),
  }).extend(publicActions);
  // Writes run in the one-at-a-time queue: a failing one must fail at once, not retry while others wait.
  const writer = createWalletClient({
    account,
    chain: options.chain,
    transport: http(options.rpcUrl, { timeout, retryCount: 0 }),
  });
  const broadcast = inOrder();
  // A replayed (or otherwise spent) EIP-3009 authorization is refused from its on-chain state, outside the queue.
  const assertUnused = async (args: { address: Hex; functionName: string; args?: readonly unknown[] }) => {
    if (!EIP3009_TRANSFERS.has(args.functionName) || !args.args) return;
    const [from, , , , , nonce] = args.args as [Hex, unknown, unknown, unknown, unknown, Hex];
    const used = await client.readContract({
      address: args.address,
      abi: AUTHORIZATION_STATE_ABI,
      functionName: "authorizationState",
      args: [from, nonce],
    });
    if (used) throw new Error("authorization_already_used: the EIP-3009 authorization was used on chain");
  };
  const signer = toFacilitatorEvmSigner(
    {
      address: account.address,
      readContract: (args) => client.readContract(args as Parameters<typeof client.readContract>[0]),
      verifyTypedData: (args) => client.verifyTypedData(args as Parameters<typeof client.verifyTypedData>[0]),
      writeContract: async (args) => {
        await assertUnused(args as { address: Hex; functionName: string; args?: readonly unknown[] });
        return broadcast(() => writer.writeContract(args as Parameters<typeof writer.writeContract>[0]));
      },
      sendTransaction: (args) => broadcast(() => writer.sendTransaction(args)),
      waitForTransactionReceipt: (args) => client.waitForTransactionReceipt({ ...args, pollingInterval: 50 }),
      getCode: (args) => client.getCode(args),
    },
    { confirmationTimeoutMs: options.confirmationTimeoutMs },
  );
  const facilitator = new x402Facilitator();
  // x402 v2 on this chain only: `registerExactEvmScheme` would also list x402 v1 on every network x402 knows
  // (mainnets among them) in /supported, which this account cannot settle on.
  facilitator.register(options.networks ?? [`eip155:${options.chain.id}`], new ExactEvmScheme(signer));
  return { ...createInProcessFacilitatorClient(facilitator), address: account.address };
}
