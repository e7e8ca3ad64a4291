/**
 * The in-process facilitator settling many payments at once from its one account: every settlement lands. A
 * node takes an account's transactions only in nonce order, and Hardhat's automine refuses one that overtakes
 * an earlier nonce, which concurrent settlements used to do.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { ABIs, type Devnet, startDevnet } from "@humanpass/devnet";
import { x402Client } from "@x402/core/client";
import type { Network, PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createEvmFacilitatorClient } from "../src/index.ts";

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

function requirementsFor(network: Network): PaymentRequirements {
  return {
    scheme: "exact",
    network,
    amount: PRICE.toString(),
    asset: devnet.addresses.usdc,
    payTo: devnet.accounts[7].address,
    maxTimeoutSeconds: 300,
    extra: { name: "USD Coin", version: "2" },
  };
}

/** A JSON-RPC proxy in front of the devnet that records the methods it forwards. */
async function recordingRpc(target: string) {
  const methods: string[] = [];
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    const parsed = JSON.parse(body) as { method: string } | { method: string }[];
    for (const call of [parsed].flat()) methods.push(call.method);
    const answer = await fetch(target, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    response.writeHead(answer.status, { "content-type": "application/json" }).end(await answer.text());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    methods,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

it("refuses a replayed authorization from its on-chain state, without sending or retrying anything", async () => {
  const network: Network = `eip155:${devnet.chainId}`;
  const requirements = requirementsFor(network);
  const client = new x402Client().setSpendControls({
    allowedAssets: [{ network, asset: devnet.addresses.usdc }],
  });
  registerExactEvmScheme(client, { signer: privateKeyToAccount(devnet.accounts[2].privateKey) });
  const payload = await client.createPaymentPayload({
    x402Version: 2,
    resource: { url: "http://127.0.0.1/paid", description: "", mimeType: "application/json" },
    accepts: [requirements],
  });
  const rpc = await recordingRpc(devnet.rpcUrl);
  try {
    const facilitator = createEvmFacilitatorClient({
      rpcUrl: rpc.url,
      chain: devnet.chain,
      privateKey: devnet.accounts[5].privateKey,
    });
    expect(await facilitator.settle(payload, requirements)).toMatchObject({ success: true });
    rpc.methods.length = 0;

    const replay = await facilitator.settle(payload, requirements);

    expect(replay.success).toBe(false);
    expect(rpc.methods.filter((m) => m === "eth_estimateGas" || m === "eth_sendRawTransaction")).toEqual([]);
  } finally {
    await rpc.close();
  }
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
