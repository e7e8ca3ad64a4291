/**
 * A hostile site on another origin answers `302 → the gateway`. x402's fetch follows the redirect to the gateway's
 * 402 but sends the paid retry to the URL it was first given, so, unchecked, an agent that follows redirects hands
 * the hostile site a payment and a human proof signed for the gateway, to spend there against the agent's human.
 * Our extension refuses such a 402, and an agent on `withoutRedirects(fetch)` never follows the redirect.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  buildDIDFromAddress,
  CrossOriginRedirectError,
  createAttestationAwareSelector,
  createHumanProofClientExtension,
  withoutRedirects,
} from "@humanpass/human-proof";
import { x402Client } from "@x402/core/client";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { humanSigner } from "./support/agents.ts";
import { demoRoute, type Gateway, humanTier, type Stack, standardTier, startStack } from "./support/stack.ts";

const VICTIM = 3;
const HUMAN_ID = "4141";
const SCOPE = "redirect-harvest";

let stack: Stack;
let gateway: Gateway;
let hostile: HostileSite;

/** Redirects every unpaid request to the gateway; replays every payment it receives there, as an attacker would. */
interface HostileSite {
  url: string;
  /** What the gateway answered to each payment the site replayed. */
  replays: number[];
  close(): Promise<void>;
}

async function startHostileSite(target: string): Promise<HostileSite> {
  const replays: number[] = [];
  const server: Server = createServer(async (request, response) => {
    const payment = request.headers["payment-signature"];
    if (typeof payment !== "string") {
      response.writeHead(302, { location: target }).end();
      return;
    }
    const replayed = await fetch(target, { headers: { "payment-signature": payment } });
    replays.push(replayed.status);
    response.writeHead(200, { "content-type": "application/json" }).end('{"thanks":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/weather`,
    replays,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The agent of docs/sdk.md, on the fetch it is given. */
function agent(privateKey: Hex, baseFetch: typeof fetch) {
  const account = privateKeyToAccount(privateKey);
  const selector = createAttestationAwareSelector(buildDIDFromAddress(account.address), undefined, {
    attestationsApiBaseUrl: stack.attestations.attestationsUrl,
  });
  const client = new x402Client(selector.selector)
    .register("eip155:*", new ExactEvmScheme(account))
    .setSpendControls({ allowedAssets: [{ network: stack.network, asset: stack.devnet.addresses.usdc }] });
  client.registerExtension(createHumanProofClientExtension(humanSigner(privateKey), { selector }));
  return wrapFetchWithPayment(baseFetch, client);
}

const victim = () => privateKeyToAccount(stack.agentKey(VICTIM)).address;

beforeAll(async () => {
  stack = await startStack("pg_redirect_harvest");
  gateway = await stack.startGateway({
    routes: [
      demoRoute("/weather", [
        standardTier(stack.network, "10000"),
        humanTier(stack.network, "1000", { maxUse: 5, scope: SCOPE }),
      ]),
    ],
  });
  await stack.attestations.pairAgent(victim(), privateKeyToAccount(`0x${"41".repeat(32)}`).address, HUMAN_ID);
  hostile = await startHostileSite(`${gateway.url}/weather`);
});

afterAll(async () => {
  await hostile?.close();
  await stack?.close();
});

describe("a hostile site that redirects to the gateway", () => {
  it("gets nothing from the agent of the docs: it sees the redirect, pays nothing, its human's usage does not move", async () => {
    const before = await stack.usdcBalance(victim());
    const response = await agent(stack.agentKey(VICTIM), withoutRedirects(fetch))(hostile.url);

    expect(response.status).toBe(302);
    expect(response.headers.get("location")).toBe(`${gateway.url}/weather`);
    expect(hostile.replays).toEqual([]);
    expect(await stack.usdcBalance(victim())).toBe(before);
    expect(await stack.storage.count(HUMAN_ID, SCOPE)).toBe(0);
  });

  it("with a fetch that follows redirects (x402's default) the extension refuses: nothing paid, nothing replayed", async () => {
    const before = await stack.usdcBalance(victim());
    await expect(agent(stack.agentKey(VICTIM), fetch)(hostile.url)).rejects.toBeInstanceOf(
      CrossOriginRedirectError,
    );

    expect(hostile.replays).toEqual([]);
    expect(await stack.usdcBalance(victim())).toBe(before);
    expect(await stack.storage.count(HUMAN_ID, SCOPE)).toBe(0);
  });
});
