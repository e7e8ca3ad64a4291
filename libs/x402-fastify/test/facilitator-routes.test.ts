/**
 * The x402 facilitator HTTP API served by `facilitatorRoutes` over the EVM facilitator, as a server using
 * `@x402/core`'s `HTTPFacilitatorClient` sees it: supported kinds, a verified and settled payment that moves the
 * tokens on chain, refusals as x402's client reports them (without the payer's signature bytes), 400 with a code
 * for a malformed body, and 401 with a code on a server given an API key when the caller does not send it.
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
let keyed: FastifyInstance;
let keyedUrl: string;
const API_KEY = "facilitator-test-key";
let network: Network;

beforeAll(async () => {
  devnet = await startDevnet({ accounts: 7, usdcAccounts: 4 });
  network = `eip155:${devnet.chainId}`;
  const facilitator = createEvmFacilitatorClient({
    rpcUrl: devnet.rpcUrl,
    chain: devnet.chain,
    privateKey: devnet.accounts[5].privateKey,
  });
  app = Fastify();
  await app.register(facilitatorRoutes, { facilitator });
  url = await app.listen({ port: 0, host: "127.0.0.1" });
  keyed = Fastify();
  await keyed.register(facilitatorRoutes, { facilitator, apiKey: API_KEY });
  keyedUrl = await keyed.listen({ port: 0, host: "127.0.0.1" });
});

afterAll(async () => {
  await app?.close();
  await keyed?.close();
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
  it("lists only what it settles: the exact scheme of x402 v2 on the chain's network", async () => {
    const supported = await new HTTPFacilitatorClient({ url }).getSupported();
    expect(supported.kinds).toEqual([{ x402Version: 2, scheme: "exact", network }]);
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

  it("says why a payment fails without the payer's signature bytes (v, r, s) or the call's arguments", async () => {
    // Account 6 holds no USDC: the transfer's simulation reverts, and viem's message lists the call's arguments.
    const paid = await payment(6);
    const signature = (paid.payload as { signature: string }).signature.slice(2);
    const response = await fetch(`${url}/verify`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ x402Version: 2, paymentPayload: paid, paymentRequirements: requirements() }),
    });
    const verdict = (await response.json()) as { isValid: boolean; invalidMessage?: string };
    expect(verdict.isValid).toBe(false);
    expect(verdict.invalidMessage).toMatch(/\S/);
    const text = JSON.stringify(verdict).toLowerCase();
    for (const part of [signature.slice(0, 64), signature.slice(64, 128), signature])
      expect(text).not.toContain(part.toLowerCase());
    expect(text).not.toMatch(/args|arguments/);
  });
});

describe("facilitatorRoutes with an API key", () => {
  it("answers /verify and /settle 401 with a code without the key, and serves a client that sends it", async () => {
    for (const path of ["/verify", "/settle"]) {
      for (const authorization of [undefined, "Bearer wrong", API_KEY]) {
        const response = await fetch(`${keyedUrl}${path}`, {
          method: "POST",
          headers: { "content-type": "application/json", ...(authorization && { authorization }) },
          body: JSON.stringify({
            x402Version: 2,
            paymentPayload: await payment(3),
            paymentRequirements: requirements(),
          }),
        });
        expect(response.status).toBe(401);
        expect(await response.json()).toMatchObject({ code: "unauthorized" });
      }
    }
    const headers = { Authorization: `Bearer ${API_KEY}` };
    const facilitator = new HTTPFacilitatorClient({
      url: keyedUrl,
      createAuthHeaders: async () => ({ verify: headers, settle: headers, supported: headers }),
    });
    const paid = await payment(3);
    const before = await balance(4);
    expect(await facilitator.verify(paid, requirements())).toMatchObject({ isValid: true });
    expect(await facilitator.settle(paid, requirements())).toMatchObject({ success: true });
    expect((await balance(4)) - before).toBe(1000n);
  });
});
