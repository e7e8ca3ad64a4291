/**
 * The in-process facilitator settling many payments at once from its one account: every settlement lands. A
 * node takes an account's transactions only in nonce order, and Hardhat's automine refuses one that overtakes
 * an earlier nonce, which concurrent settlements used to do.
 */
import { ABIs, type Devnet, startDevnet } from "@humanpass/devnet";
import { x402Client } from "@x402/core/client";
import type { Network, PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createEvmFacilitatorClient } from "../src";

const PAYMENTS = 30;
const ROUNDS = 3;
const PRICE = 1_000n;
let devnet: Devnet;

beforeAll(async () => {
  devnet = await startDevnet({ accounts: 8, usdcAccounts: 6 });
});

afterAll(async () => {
  await devnet?.stop();
});

it("settles concurrent payments from one settling account, each exactly once", async () => {
  const network: Network = `eip155:${devnet.chainId}`;
  const payTo = devnet.accounts[7].address;
  const requirements: PaymentRequirements = {
    scheme: "exact",
    network,
    amount: PRICE.toString(),
    asset: devnet.addresses.usdc,
    payTo,
    maxTimeoutSeconds: 300,
    extra: { name: "USD Coin", version: "2" },
  };
  const payment = (i: number): Promise<PaymentPayload> => {
    const client = new x402Client().setSpendControls({
      allowedAssets: [{ network, asset: devnet.addresses.usdc }],
    });
    registerExactEvmScheme(client, { signer: privateKeyToAccount(devnet.accounts[1 + (i % 5)].privateKey) });
    return client.createPaymentPayload({
      x402Version: 2,
      resource: { url: "http://127.0.0.1/paid", description: "", mimeType: "application/json" },
      accepts: [requirements],
    });
  };
  const facilitator = createEvmFacilitatorClient({
    rpcUrl: devnet.rpcUrl,
    chain: devnet.chain,
    privateKey: devnet.accounts[6].privateKey,
  });
  const balance = () =>
    devnet.client.readContract({
      address: devnet.addresses.usdc,
      abi: ABIs.usdc,
      functionName: "balanceOf",
      args: [payTo],
    }) as Promise<bigint>;
  const before = await balance();
  const transactions = new Set<string>();

  for (let round = 0; round < ROUNDS; round++) {
    const payloads = await Promise.all(Array.from({ length: PAYMENTS }, (_, i) => payment(i)));
    const results = await Promise.all(payloads.map((payload) => facilitator.settle(payload, requirements)));
    expect(results.filter((r) => !r.success).map((r) => `${r.errorReason}: ${r.errorMessage}`)).toEqual([]);
    for (const result of results) transactions.add(result.transaction);
  }

  expect(transactions.size).toBe(ROUNDS * PAYMENTS);
  expect(await balance()).toBe(before + BigInt(ROUNDS * PAYMENTS) * PRICE);
});
