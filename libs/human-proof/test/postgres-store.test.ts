/**
 * `PostgresHumanProofStore` on a real Postgres: two pools stand for two instances of a server; then two of the
 * docs' servers on separate ports sharing one database, paid by one human's agent.
 */
import { createTestDatabase, type TestDatabase } from "@humanpass/testing";
import { x402Client, x402HTTPClient } from "@x402/core/client";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import pg from "pg";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  buildDIDFromAddress,
  createAttestationAwareSelector,
  createHumanProofExtension as createHumanProofClientExtension,
} from "../src/client/index.ts";
import {
  migrateHumanProofStore,
  PostgresHumanProofStore,
  PostgresUsedNonceStore,
} from "../src/postgres/index.ts";
import {
  createChallengeNonces,
  createPoUVerifier,
  createSettleFailureRollbackHook,
  createVerifyHumanProofHook,
  type PaymentAuthorization,
  type ProofAdmission,
} from "../src/server/index.ts";
import { account, challenge, RESOURCE, registry, resolutionFor, sign, tier } from "./proof-fixtures.ts";
import {
  type AttestationsApiStandIn,
  humanFromAddress,
  ownershipAttestation,
  startAttestationsApiStandIn,
} from "./support/attestations-api-stand-in.ts";
import {
  type DocsServer,
  HUMAN_PRICE,
  MAX_USE,
  STANDARD_PRICE,
  startDocsServer,
} from "./support/docs-servers.ts";
import { ScriptedFacilitator } from "./support/paid-http-server.ts";

let database: TestDatabase;
let pools: pg.Pool[];
let stores: PostgresHumanProofStore[];

beforeAll(async () => {
  database = await createTestDatabase("hp_store");
  pools = [0, 1].map(() => new pg.Pool({ connectionString: database.url, max: 20 }));
  // Two instances starting together both migrate: the lock and `if not exists` make that safe.
  await Promise.all(pools.map((pool) => migrateHumanProofStore(pool)));
  stores = pools.map((pool) => new PostgresHumanProofStore(pool));
});

afterAll(async () => {
  await Promise.all((pools ?? []).map((pool) => pool.end()));
  await database?.drop();
});

const admission = (
  nonce: string,
  humanId: string,
  use?: { maxUse: number; scope: string },
): ProofAdmission => ({
  nonce,
  nonceExpiresAt: new Date(Date.now() + 60_000),
  resource: "http://api/r",
  events: [],
  ...(use ? { use: { humanId, ...use } } : {}),
});

const payment = (nonce: string) =>
  ({
    payload: {
      x402Version: 2,
      payload: { authorization: { from: "0xPayer", nonce, validBefore: "4000000000" } },
    },
    requirements: { network: "eip155:45056", asset: "0xToken" },
  }) as unknown as NonNullable<ProofAdmission["payment"]>;

const authorization = (nonce: string): PaymentAuthorization => ({
  network: "eip155:45056",
  asset: "0xtoken",
  payer: "0xpayer",
  nonce,
  expiresAt: new Date(4_000_000_000_000),
});

describe("PostgresHumanProofStore", () => {
  it("accepts a nonce once across instances, and takes no use for a nonce used before", async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        stores[i % 2].admit(admission("once", "h2", { maxUse: 9, scope: "s" })),
      ),
    );
    expect(results.filter((r) => r.nonceFresh)).toEqual([{ nonceFresh: true, count: 1 }]);
    expect(await stores[0].count("h2", "s")).toBe(1);
  });

  it("refunds the use a proof took by its nonce, once, and nothing for a proof that took none", async () => {
    await stores[0].admit(admission("r-1", "h3", { maxUse: 2, scope: "s" }));
    await stores[0].admit(admission("r-2", "h3", { maxUse: 2, scope: "s" }));
    // At the cap: this proof took no use, so its refund gives nothing back.
    expect((await stores[0].admit(admission("r-3", "h3", { maxUse: 2, scope: "s" }))).count).toBeNull();
    await stores[1].refund("r-3");
    expect(await stores[0].count("h3", "s")).toBe(2);
    await Promise.all([stores[0].refund("r-1"), stores[1].refund("r-1"), stores[0].refund("r-1")]);
    expect(await stores[0].count("h3", "s")).toBe(1);
  });

  it("claims an admitted proof's payment once across instances, for that proof alone, never at the cap", async () => {
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        stores[i % 2].admit({
          ...admission(`copy-${i}`, "h4", { maxUse: 100, scope: "c" }),
          payment: payment("0xAA"),
        }),
      ),
    );
    expect(results.filter((r) => !r.paymentRefusal)).toHaveLength(1);
    expect(results.filter((r) => r.paymentRefusal === "duplicate_payment")).toHaveLength(9);
    const claimant = `copy-${results.findIndex((r) => !r.paymentRefusal)}`;
    // The claimant's own claim after verification is granted, on either instance; nobody else's is.
    expect(await stores[1].reserve(authorization("0xaa"), claimant)).toBe(true);
    expect(await stores[0].reserve(authorization("0xaa"), claimant)).toBe(true);
    expect(await stores[0].reserve(authorization("0xaa"), "copy-x")).toBe(false);
    expect(await stores[0].reserve(authorization("0xaa"))).toBe(false);
    // Only the claimant gives it back.
    await stores[0].release(authorization("0xaa"), "copy-x");
    expect(await stores[1].reserve(authorization("0xaa"))).toBe(false);
    await stores[1].release(authorization("0xaa"), claimant);
    expect(await stores[1].reserve(authorization("0xaa"))).toBe(true);

    // At the cap the payment is refused for the quota, and claims nothing.
    await stores[0].admit({
      ...admission("cap-1", "h5", { maxUse: 1, scope: "c" }),
      payment: payment("0xB0"),
    });
    expect(
      await stores[0].admit({
        ...admission("cap-2", "h5", { maxUse: 1, scope: "c" }),
        payment: payment("0xBB"),
      }),
    ).toEqual({ nonceFresh: true, count: null });
    expect(await stores[1].reserve(authorization("0xbb"))).toBe(true);
  });

  it("claims a payment without a proof once, however many instances race for it", async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => stores[i % 2].reserve(authorization("0xcc"))),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it("keeps a copied payload's human: the rollback of a deep copy refunds the use its proof took", async () => {
    const agent = account(7);
    const verifier = registry({}, {});
    verifier.lookupHuman = async () => resolutionFor(agent.address, "h6");
    const requirements = tier({
      requiredAttestations: [verifier.ownershipSchema],
      maxUse: 1,
      scope: "copied",
    });
    const context = {
      paymentPayload: {
        x402Version: 2,
        payload: { authorization: { from: agent.address } },
        resource: { url: RESOURCE, description: "", mimeType: "" },
        accepted: requirements,
        extensions: { "human-proof": await sign(agent) },
      },
      requirements,
      declaredExtensions: { "human-proof": challenge() },
    };
    const hook = createVerifyHumanProofHook({ verifier, admissions: stores[0] });
    expect(await hook(context)).toBeUndefined();
    expect(await stores[0].count("h6", "copied")).toBe(1);
    const copy = structuredClone(context);
    await createSettleFailureRollbackHook({ admissions: stores[1] })({
      ...copy,
      phase: "after-handler",
      error: new Error("reverted"),
    });
    expect(await stores[0].count("h6", "copied")).toBe(0);
  });

  it("purges rows past their expiry, and only those", async () => {
    await stores[0].admit({ ...admission("old", "h7"), nonceExpiresAt: new Date(Date.now() - 1_000) });
    await stores[0].admit(admission("new", "h7"));
    const deleted = await stores[1].purgeExpired(new Date(), 10);
    expect(deleted).toBeGreaterThanOrEqual(1);
    const { rows } = await pools[0].query(
      "select nonce from used_proof_nonces where nonce in ('old', 'new')",
    );
    expect(rows).toEqual([{ nonce: "new" }]);
  });
});

describe("PostgresUsedNonceStore", () => {
  it("of 50 concurrent redemptions of one nonce through two instances, exactly one wins", async () => {
    const used = pools.map((pool) => new PostgresUsedNonceStore(pool));
    const expiresAt = new Date(Date.now() + 60_000);
    const nonce = createChallengeNonces().issue({ domain: "api.example.com", uri: RESOURCE }, Date.now());
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => used[i % 2].consume(nonce, expiresAt)),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await used[1].consume(nonce, expiresAt)).toBe(false);
  });

  it("shares its table with PostgresHumanProofStore: a nonce redeemed by either is spent for both", async () => {
    const used = new PostgresUsedNonceStore(pools[0]);
    expect(await used.consume("shared-1", new Date(Date.now() + 60_000))).toBe(true);
    expect((await stores[1].admit(admission("shared-1", "h8"))).nonceFresh).toBe(false);
    expect((await stores[1].admit(admission("shared-2", "h8"))).nonceFresh).toBe(true);
    expect(await used.consume("shared-2", new Date(Date.now() + 60_000))).toBe(false);
  });

  it("purges redemptions past their expiry, and only those", async () => {
    const used = new PostgresUsedNonceStore(pools[1]);
    await used.consume("stale-1", new Date(Date.now() - 1_000));
    await used.consume("fresh-1", new Date(Date.now() + 60_000));
    expect(await used.purgeExpired()).toBeGreaterThanOrEqual(1);
    const { rows } = await pools[0].query(
      "select nonce from used_proof_nonces where nonce in ('stale-1', 'fresh-1')",
    );
    expect(rows).toEqual([{ nonce: "fresh-1" }]);
  });
});

describe("two instances of the docs' server on one Postgres database", () => {
  const agentAccount = privateKeyToAccount(`0x${"45".repeat(32)}`);
  const human = humanFromAddress(privateKeyToAccount(`0x${"46".repeat(32)}`).address);
  const facilitator = new ScriptedFacilitator();
  let api: AttestationsApiStandIn;
  let instances: DocsServer[];

  beforeAll(async () => {
    api = await startAttestationsApiStandIn({
      attestations: [ownershipAttestation(human, agentAccount.address)],
      nullifiers: { [human.id]: "4545" },
    });
    const verifier = createPoUVerifier({
      attestationsApiBaseUrl: api.attestationsUrl,
      nullifierApiBaseUrl: api.nullifierUrl,
    });
    instances = await Promise.all(
      stores.map((store) =>
        startDocsServer("fastify", facilitator, {
          verifier,
          admissions: store,
          paymentGuards: { reservations: store },
        }),
      ),
    );
  });
  afterAll(async () => {
    await Promise.all((instances ?? []).map((instance) => instance.close()));
    await api?.close();
  });

  it("keeps maxUse exact under 50 concurrent requests of one human, half on each instance", async () => {
    const selector = createAttestationAwareSelector(buildDIDFromAddress(agentAccount.address), undefined, {
      attestationsApiBaseUrl: api.attestationsUrl,
    });
    const client = new x402Client(selector.selector)
      .register("eip155:*", new ExactEvmScheme(agentAccount))
      .setSpendControls(false);
    client.registerExtension(
      createHumanProofClientExtension(
        {
          address: agentAccount.address,
          signMessage: (message: string) => agentAccount.signMessage({ message }),
        },
        { selector },
      ),
    );
    const pay = wrapFetchWithPayment(fetch, client);
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) => pay(`${instances[i % 2].url}/weather`)),
    );
    const served = responses.filter((r) => r.status === 200).length;
    const discounted = facilitator.settled.filter((amount) => amount === HUMAN_PRICE);
    expect(discounted).toHaveLength(MAX_USE);
    const { rows } = await pools[0].query(
      "select sum(count)::int as uses from human_usage where scope = 'weather'",
    );
    expect(rows).toEqual([{ uses: MAX_USE }]);
    // Every response served was paid, at one tier or the other, and ran its handler once.
    expect(facilitator.settled).toHaveLength(served);
    expect(instances[0].handlers.weather + instances[1].handlers.weather).toBe(served);
    expect(facilitator.settled.filter((amount) => amount === STANDARD_PRICE)).toHaveLength(served - MAX_USE);
  });

  it("runs the handler once for 10 concurrent copies of one payment spread over both instances", async () => {
    const before = instances[0].handlers.weather + instances[1].handlers.weather;
    const payments = new x402HTTPClient(
      new x402Client()
        .register("eip155:*", new ExactEvmScheme(privateKeyToAccount(`0x${"47".repeat(32)}`)))
        .setSpendControls(false),
    );
    const unpaid = await fetch(`${instances[0].url}/weather`);
    const required = payments.getPaymentRequiredResponse(
      (name) => unpaid.headers.get(name),
      await unpaid.json(),
    );
    const headers = payments.encodePaymentSignatureHeader(await payments.createPaymentPayload(required));
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) => fetch(`${instances[i % 2].url}/weather`, { headers })),
    );
    expect(responses.filter((r) => r.status === 200)).toHaveLength(1);
    expect(instances[0].handlers.weather + instances[1].handlers.weather - before).toBe(1);
  });
});
