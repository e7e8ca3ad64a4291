/**
 * The x402 facilitator HTTP API served by `facilitatorRoutes` over the EVM facilitator, as a server using
 * `@x402/core`'s `HTTPFacilitatorClient` sees it: supported kinds, a verified and settled payment that moves the
 * tokens on chain, refusals as x402's client reports them, and 400 with a code for a malformed body.
 */
import { type Devnet, startDevnet } from "@humanpass/devnet";
import { x402Client } from "@x402/core/client";
import { HTTPFacilitatorClient } from "@x402/core/server";
import type { Network, PaymentRequirements } from "@x402/core/types";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import Fastify, { type FastifyInstance } from "fastify";
import { erc20Abi } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEvmFacilitatorClient, facilitatorRoutes } from "../src/index.ts";

let devnet: Devnet;
let app: FastifyInstance;
let url: string;
let network: Network;

beforeAll(async () => {
  devnet = await startDevnet({ accounts: 6, usdcAccounts: 4 });
  network = `eip155:${devnet.chainId}`;
  const facilitator = createEvmFacilitatorClient({
    rpcUrl: devnet.rpcUrl,
    chain: devnet.chain,
    privateKey: devnet.accounts[5].privateKey,
  });
  app = Fastify();
  await app.register(facilitatorRoutes, { facilitator });
  url = await app.listen({ port: 0, host: "127.0.0.1" });
});

afterAll(async () => {
  await app?.close();
  await devnet?.stop();
});

const requirements = (): PaymentRequirements => ({
  scheme: "exact",
  network,
  amount: "1000",
  asset: devnet.addresses.usdc,
  payTo: devnet.accounts[4].address,
  maxTimeoutSeconds: 300,
  extra: { name: "USD Coin", version: "2" },
});

async function payment(payer: number) {
  const client = new x402Client().setSpendControls({
    allowedAssets: [{ network, asset: devnet.addresses.usdc }],
  });
  registerExactEvmScheme(client, { signer: privateKeyToAccount(devnet.accounts[payer].privateKey) });
  return client.createPaymentPayload({
    x402Version: 2,
    resource: { url: "http://127.0.0.1/paid", description: "", mimeType: "application/json" },
    accepts: [requirements()],
  });
}

const balance = (account: number) =>
  devnet.client.readContract({
    address: devnet.addresses.usdc,
    abi: erc20Abi,
    functionName: "balanceOf",
    args: [devnet.accounts[account].address],
  });

describe("facilitatorRoutes through HTTPFacilitatorClient", () => {
  it("lists the exact scheme on the chain's network", async () => {
    const supported = await new HTTPFacilitatorClient({ url }).getSupported();
    expect(supported.kinds).toContainEqual(expect.objectContaining({ scheme: "exact", network }));
  });

  it("verifies and settles a payment on chain, then refuses the same authorization again", async () => {
    const facilitator = new HTTPFacilitatorClient({ url });
    const paid = await payment(1);
    const before = await balance(4);
    expect(await facilitator.verify(paid, requirements())).toMatchObject({ isValid: true });
    expect(await facilitator.settle(paid, requirements())).toMatchObject({ success: true, network });
    expect((await balance(4)) - before).toBe(1000n);
    expect(await facilitator.settle(paid, requirements())).toMatchObject({
      success: false,
      errorReason: "invalid_exact_evm_nonce_already_used",
    });
    expect((await balance(4)) - before).toBe(1000n);
  });

  it("says invalid for a payment below the price", async () => {
    const paid = await payment(2);
    const dearer = { ...requirements(), amount: "5000" };
    const verdict = await new HTTPFacilitatorClient({ url }).verify({ ...paid, accepted: dearer }, dearer);
    expect(verdict.isValid).toBe(false);
  });

  it("answers a malformed body with 400 and a code, never a 500", async () => {
    const response = await fetch(`${url}/verify`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ paymentPayload: "nope" }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: "FST_ERR_VALIDATION" });
  });
});
