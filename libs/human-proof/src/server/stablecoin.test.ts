import { ExactEvmScheme } from "@x402/evm/exact/server";
import { describe, expect, it } from "vitest";
import { stablecoinMoneyParser } from "./stablecoin.ts";

const USDC = "0x5FbDB2315678afecb367f032d93F642f64180aa3";

describe("stablecoinMoneyParser", () => {
  it("lets a dollar price be paid in the registered token on its network, and only there", async () => {
    const scheme = new ExactEvmScheme().registerMoneyParser(
      stablecoinMoneyParser({ network: "eip155:45056", asset: USDC, name: "USD Coin", version: "2" }),
    );
    expect(await scheme.parsePrice("$0.01", "eip155:45056")).toEqual({
      amount: "10000",
      asset: USDC,
      extra: { name: "USD Coin", version: "2" },
    });
    await expect(scheme.parsePrice("$0.01", "eip155:45057")).rejects.toThrow(/No default asset/);
  });
});
