import { readFileSync } from "node:fs";
import { type DemoSeed, type Devnet, seedDemo, startDevnet } from "@humanpass/devnet";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { composeDevnetEnv } from "../../devnet/compose-env.ts";
import { repoPath } from "./paths.ts";

describe("docker-compose.yml and the devnet", () => {
  let devnet: Devnet;
  let seed: DemoSeed;

  beforeAll(async () => {
    devnet = await startDevnet({ accounts: 13 });
    seed = await seedDemo(devnet);
  });

  afterAll(async () => {
    await devnet?.stop();
  });

  it("carries the addresses, keys and schema id the devnet container produces", () => {
    const compose = parse(readFileSync(repoPath("docker-compose.yml"), "utf8"), { merge: true });
    for (const [service, env] of Object.entries(composeDevnetEnv(devnet, seed))) {
      expect(compose.services[service].environment, service).toMatchObject(env);
    }
  });

  it("prices the gateway's compose routes in the USDC the devnet deploys, and only there differs from the image's", () => {
    const compose = JSON.parse(readFileSync(repoPath("deploy/compose/gateway-routes.json"), "utf8"));
    const image = JSON.parse(readFileSync(repoPath("services/payment-gateway/config/routes.json"), "utf8"));
    expect(compose.assets["eip155:45056"].address).toBe(devnet.addresses.usdc);
    image.assets["eip155:45056"].address = devnet.addresses.usdc;
    expect(compose).toEqual(image);
  });
});
