import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { ConfigError, loadConfig } from "@humanpass/config";
import { createTestDatabase, type TestDatabase, testNatsUrl } from "@humanpass/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkSettings, PaymentGatewayEnv } from "../src/config.ts";
import { loadRoutesFile, parseRoutesFile } from "../src/routes-file.ts";
import { buildRoutesConfig } from "../src/x402/payment-server.ts";
import { runMain } from "./support/gateway-process.ts";

const EVM_ADDRESS = "0x000000000000000000000000000000000000dEaD";
const NETWORK = "eip155:45056";

function problemsOf(fn: () => unknown): { variable: string; message: string }[] {
  try {
    fn();
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
  return [];
}

describe("environment", () => {
  it("has spec 3's defaults: port 4021, no mock facilitator", () => {
    const config = loadConfig(PaymentGatewayEnv, {
      EVM_ADDRESS,
      FACILITATOR_URL: "https://facilitator.humanpass.internal",
    });
    expect(config).toMatchObject({ PORT: 4021, MOCK_FACILITATOR: false, USAGE_STORAGE: "postgres" });
    expect(() => checkSettings(config)).not.toThrow();
  });

  it("requires EVM_ADDRESS and names it", () => {
    expect(
      problemsOf(() => loadConfig(PaymentGatewayEnv, { FACILITATOR_URL: "https://f.example" })).map(
        (p) => p.variable,
      ),
    ).toEqual(["EVM_ADDRESS"]);
    expect(problemsOf(() => loadConfig(PaymentGatewayEnv, { EVM_ADDRESS: "0x12" }))[0].variable).toBe(
      "EVM_ADDRESS",
    );
  });

  it("requires FACILITATOR_URL unless MOCK_FACILITATOR=true", () => {
    const config = loadConfig(PaymentGatewayEnv, { EVM_ADDRESS });
    expect(problemsOf(() => checkSettings(config)).map((p) => p.variable)).toEqual(["FACILITATOR_URL"]);
    expect(() =>
      checkSettings(loadConfig(PaymentGatewayEnv, { EVM_ADDRESS, MOCK_FACILITATOR: "true" })),
    ).not.toThrow();
  });

  it("needs an RPC URL and a key for the in-process facilitator", () => {
    const config = loadConfig(PaymentGatewayEnv, { EVM_ADDRESS, FACILITATOR_URL: "local" });
    expect(problemsOf(() => checkSettings(config)).map((p) => p.variable)).toEqual([
      "FACILITATOR_RPC_URL",
      "FACILITATOR_PRIVATE_KEY",
    ]);
  });

  it("requires shared challenge-nonce keys of at least 32 characters in production", () => {
    const production = { EVM_ADDRESS, NODE_ENV: "production", FACILITATOR_URL: "https://f.example" };
    expect(problemsOf(() => checkSettings(loadConfig(PaymentGatewayEnv, production)))).toEqual([
      expect.objectContaining({ variable: "HUMAN_PROOF_NONCE_KEYS" }),
    ]);
    const keys = `${"a".repeat(32)},${"b".repeat(40)}`;
    const config = loadConfig(PaymentGatewayEnv, { ...production, HUMAN_PROOF_NONCE_KEYS: keys });
    expect(() => checkSettings(config)).not.toThrow();
    expect(() => loadConfig(PaymentGatewayEnv, { ...production, HUMAN_PROOF_NONCE_KEYS: "short" })).toThrow(
      /HUMAN_PROOF_NONCE_KEYS/,
    );
  });

  it("refuses the in-memory usage storage and the mock facilitator when NODE_ENV=production", () => {
    const config = loadConfig(PaymentGatewayEnv, {
      EVM_ADDRESS,
      NODE_ENV: "production",
      MOCK_FACILITATOR: "true",
      USAGE_STORAGE: "memory",
    });
    expect(problemsOf(() => checkSettings(config)).map((p) => p.variable)).toEqual([
      "MOCK_FACILITATOR",
      "USAGE_STORAGE",
      "HUMAN_PROOF_NONCE_KEYS",
    ]);
    const development = loadConfig(PaymentGatewayEnv, {
      EVM_ADDRESS,
      MOCK_FACILITATOR: "true",
      USAGE_STORAGE: "memory",
    });
    expect(() => checkSettings(development)).not.toThrow();
  });
});

describe("routes file", () => {
  it("the shipped one shows the three patterns and a shared scope", () => {
    const file = loadRoutesFile(fileURLToPath(new URL("../config/routes.json", import.meta.url)));
    const tiers = Object.fromEntries(
      file.routes.map((r) => [r.path, r.accepts.map((t) => t.extra?.requiredAttestations?.length ?? 0)]),
    );
    expect(tiers).toEqual({
      "/api/v1/weather": [0, 1],
      "/api/v1/forecast": [0, 1],
      "/api/v1/humans-only/report": [1],
      "/api/v1/joke": [0],
    });
    const scopes = file.routes.flatMap((r) => r.accepts.map((t) => t.extra?.scope).filter(Boolean));
    expect(scopes).toEqual(["premium-data", "premium-data"]);
  });

  it("turns tiers into x402 accepts: payTo from EVM_ADDRESS, $ownership resolved, human-proof declared", () => {
    const ownership = `0x${"ab".repeat(32)}`;
    const file = parseRoutesFile({
      assets: {
        [NETWORK]: {
          address: "0xCf7Ed3AccA5a467e9e704C703E8D87F634fB0Fc9",
          name: "USD Coin",
          version: "2",
          decimals: 6,
        },
      },
      routes: [
        {
          path: "/a",
          description: "a",
          mimeType: "application/json",
          accepts: [
            { scheme: "exact", price: "$0.01", network: NETWORK },
            {
              scheme: "exact",
              price: "$0.001",
              network: NETWORK,
              extra: { requiredAttestations: ["$ownership"], maxUse: 2, scope: "s" },
            },
          ],
        },
      ],
    });
    const routes = buildRoutesConfig(file, EVM_ADDRESS, ownership) as Record<
      string,
      { accepts: unknown[]; extensions?: Record<string, unknown> }
    >;
    expect(Object.keys(routes)).toEqual(["GET /a"]);
    expect(routes["GET /a"].accepts).toEqual([
      { scheme: "exact", network: NETWORK, payTo: EVM_ADDRESS, price: "$0.01", extra: {} },
      {
        scheme: "exact",
        network: NETWORK,
        payTo: EVM_ADDRESS,
        price: "$0.001",
        extra: { requiredAttestations: [ownership], maxUse: 2, scope: "s" },
      },
    ]);
    expect(routes["GET /a"].extensions?.["human-proof"]).toBeDefined();
  });

  it("reports every mistake with where it is", () => {
    const problems = problemsOf(() =>
      parseRoutesFile({
        routes: [
          {
            path: "/x",
            description: "",
            mimeType: "text/plain",
            accepts: [{ scheme: "exact", price: "$1", network: NETWORK, extra: { maxUse: 0 } }],
          },
        ],
      }),
    );
    expect(problems[0]).toMatchObject({
      variable: "ROUTES_FILE",
      message: expect.stringContaining("/routes/0/accepts/0/extra/maxUse"),
    });
    const noAsset = problemsOf(() =>
      parseRoutesFile({
        routes: [
          {
            path: "/x",
            description: "",
            mimeType: "text/plain",
            accepts: [{ scheme: "exact", price: "$1", network: NETWORK }],
          },
        ],
      }),
    );
    expect(noAsset[0].message).toContain(`a dollar price needs assets["${NETWORK}"]`);
    expect(problemsOf(() => loadRoutesFile("/nonexistent/routes.json"))[0].message).toContain(
      "cannot read /nonexistent/routes.json",
    );
  });

  it("refuses a tier that picks its own asset transfer method or payment flow", () => {
    const tier = (extra: Record<string, unknown>) => ({
      routes: [
        {
          path: "/x",
          description: "",
          mimeType: "text/plain",
          accepts: [{ scheme: "exact", price: { amount: "1", asset: EVM_ADDRESS }, network: NETWORK, extra }],
        },
      ],
    });
    expect(problemsOf(() => parseRoutesFile(tier({ assetTransferMethod: "permit2" })))[0].message).toBe(
      "/routes/0/accepts/0/extra/assetTransferMethod: tiers are paid with EIP-3009 authorizations only (Permit2 payments are refused)",
    );
    expect(problemsOf(() => parseRoutesFile(tier({ paymentFlow: "authorization" })))[0].message).toContain(
      "/routes/0/accepts/0/extra/paymentFlow: set from the route's method",
    );
  });

  it("settles routes with side effects before their handler, GET routes after it", () => {
    const route = (method: string) => ({
      method,
      path: "/orders",
      description: "orders",
      mimeType: "application/json",
      accepts: [{ scheme: "exact", price: { amount: "1", asset: EVM_ADDRESS }, network: NETWORK }],
    });
    const file = parseRoutesFile({ routes: ["GET", "POST", "PUT", "PATCH", "DELETE"].map(route) });
    const routes = buildRoutesConfig(file, EVM_ADDRESS, "0x01") as Record<
      string,
      { accepts: Array<{ extra: Record<string, unknown> }> }
    >;
    expect(
      Object.fromEntries(Object.entries(routes).map(([key, r]) => [key, r.accepts[0].extra.paymentFlow])),
    ).toEqual({
      "GET /orders": undefined,
      "POST /orders": "upfront",
      "PUT /orders": "upfront",
      "PATCH /orders": "upfront",
      "DELETE /orders": "upfront",
    });
  });
});

describe("start-up", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase("pg_config");
  });
  afterAll(async () => {
    await database?.drop();
  });

  it("stops a production gateway configured with the in-memory usage storage, naming the variable", async () => {
    const child = runMain({
      DATABASE_URL: database.url,
      NATS_URL: testNatsUrl(),
      NODE_ENV: "production",
      EVM_ADDRESS,
      FACILITATOR_URL: "https://facilitator.humanpass.internal",
      USAGE_STORAGE: "memory",
      PORT: "0",
    });
    let output = "";
    child.stdout?.on("data", (c) => {
      output += c;
    });
    child.stderr?.on("data", (c) => {
      output += c;
    });
    const [code] = await once(child, "exit");
    expect(code).not.toBe(0);
    expect(output).toContain("USAGE_STORAGE");
    expect(output).toContain("refused when NODE_ENV=production");
  });
});
