import { AttestationsApiError, type HumanLookup } from "@humanpass/attestations-client";
import {
  createChallengeNonces,
  type HumanProofExtensionInfo,
  type HumanResolution,
  signHumanProofChallengeEVMUnchecked,
} from "@humanpass/human-proof";
import { PostgresUsedNonceStore } from "@humanpass/human-proof/postgres";
import { didFromAddress } from "@humanpass/identity";
import type { Hex } from "viem";
import { generatePrivateKey, type LocalAccount, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { NONCE_LIFETIME_MS } from "../src/index.ts";
import {
  agentClient,
  evmSigner,
  outboxEvents,
  type RunningAgentAuth,
  setUpDatabase,
  startAgentAuth,
  type TestDb,
  testTerms,
} from "./harness.ts";

/**
 * Both processing orders of spec 3 through HTTP, against real Postgres, with the registry replaced by a
 * table this file controls (the real attestations API is used in e2e-devnet.test.ts).
 */
class TableResolver implements HumanLookup {
  readonly humans = new Map<string, HumanResolution>();
  failing = false;

  pair(agent: LocalAccount, humanId: string): HumanResolution {
    const resolution: HumanResolution = {
      humanId,
      verifiedAt: "2026-11-01T10:00:00.000Z",
      attestationId: `0x${humanId.padStart(64, "0")}`,
      humanDid: `did:iden3:billions:main:human${humanId}`,
      humanAddress: "0x000000000000000000000000000000000000dEaD",
      agentDid: didFromAddress(agent.address),
      agentAddress: agent.address,
    };
    this.humans.set(agent.address.toLowerCase(), resolution);
    return resolution;
  }

  async byAddress(address: string) {
    if (this.failing) throw new AttestationsApiError("registry down (test)");
    return this.humans.get(address.toLowerCase()) ?? null;
  }

  async byDid(did: string) {
    if (this.failing) throw new AttestationsApiError("registry down (test)");
    return [...this.humans.values()].find((h) => h.agentDid === did) ?? null;
  }
}

const terms = testTerms();
const resolver = new TableResolver();
const paired = privateKeyToAccount(generatePrivateKey());
const unpaired = privateKeyToAccount(generatePrivateKey());
let now = Date.now();
const clock = () => now;
let t: TestDb;
let service: RunningAgentAuth;
let agent: ReturnType<typeof agentClient>;

beforeAll(async () => {
  t = await setUpDatabase("agent_auth_orders");
  service = await startOrders();
  agent = agentClient(service.url);
  resolver.pair(paired, "1001");
});

/** The service over this file's database, resolver, terms and clock. */
function startOrders(options: Partial<Parameters<typeof startAgentAuth>[0]> = {}) {
  return startAgentAuth({ db: t.db, pool: t.pool, resolver, terms, clock, ...options });
}

afterAll(async () => {
  await service?.close();
  await t?.db.destroy();
  await t?.database.drop();
});

beforeEach(async () => {
  resolver.failing = false;
  now = Date.now();
  await t.db.deleteFrom("outbox").execute();
});

const CURVE_ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/** The other valid form of an ECDSA signature: s replaced by n - s, v flipped. viem recovers the same signer. */
function highS(signature: Hex): Hex {
  const s = BigInt(`0x${signature.slice(66, 130)}`);
  const v = Number.parseInt(signature.slice(130), 16);
  const twin = (CURVE_ORDER - s).toString(16).padStart(64, "0");
  return `${signature.slice(0, 66)}${twin}${(v === 27 ? 28 : 27).toString(16)}` as Hex;
}

/** A proof signed by `account` for a fresh helper nonce, as an object to tamper with. */
async function helperProof(account = paired): Promise<Record<string, unknown>> {
  return JSON.parse(await agent.helperProof(account));
}

describe("GET /api/v1/instructions", () => {
  it("issues a challenge for this domain and resource, with a fresh nonce, a 5-minute expiry and the ownership schema", async () => {
    const a = await agent.instructions();
    const b = await agent.instructions();
    expect(a.info.nonce).toMatch(/^[0-9a-f]{32}$/);
    expect(a.info.nonce).not.toBe(b.info.nonce);
    expect(a.info).toMatchObject({
      domain: "agents.example.test",
      uri: "https://agents.example.test/api/v1/claim",
      version: "1",
      resources: ["https://agents.example.test/api/v1/claim"],
      requiredAttestations: [terms.ownershipSchema],
    });
    expect(Date.parse(a.info.expirationTime!) - Date.parse(a.info.issuedAt)).toBe(NONCE_LIFETIME_MS);
    expect(a.supportedChains).toEqual([{ chainId: "eip155:45056", type: "eip191" }]);
  });
});

describe("POST /api/v1/claim, helper path (HUMAN-PROOF header)", () => {
  it("accepts a proof signed by a paired agent: 200 { verified, agentDid }, with human_verified and claim_accepted", async () => {
    const res = await agent.claimWithHeader(await agent.helperProof(paired));
    expect(res).toEqual({ status: 200, body: { verified: true, agentDid: didFromAddress(paired.address) } });
    const events = await outboxEvents(t.db);
    expect(events.map((e) => e.type)).toEqual(["human_verified", "claim_accepted"]);
    expect(events[0]!.data).toEqual({
      humanId: "1001",
      verifiedAt: "2026-11-01T10:00:00.000Z",
      humanDid: "did:iden3:billions:main:human1001",
      resource: terms.resource,
      agentDid: didFromAddress(paired.address),
    });
    expect(events[1]!.data).toEqual({
      path: "helper",
      agentDid: didFromAddress(paired.address),
      agentAddress: paired.address,
      humanId: "1001",
      humanDid: "did:iden3:billions:main:human1001",
      resource: terms.resource,
    });
  });

  it("1. an empty header: 400 missing_header", async () => {
    expect(await agent.claimWithHeader("")).toMatchObject({ status: 400, body: { error: "missing_header" } });
  });

  it("2. a header that is not JSON, or has no nonce: 400 invalid_header", async () => {
    expect(await agent.claimWithHeader("{not json")).toMatchObject({
      status: 400,
      body: { error: "invalid_header" },
    });
    const proof = await helperProof();
    delete proof.nonce;
    expect(await agent.claimWithHeader(JSON.stringify(proof))).toMatchObject({
      status: 400,
      body: { error: "invalid_header" },
    });
    expect(await agent.claimWithHeader(JSON.stringify({ ...proof, nonce: 7 }))).toMatchObject({
      status: 400,
      body: { error: "invalid_header" },
    });
  });

  it("3. a nonce never issued, already used, older than 5 minutes or issued by /challenge: 403 unknown_or_expired_nonce", async () => {
    const unknown = { ...(await helperProof()), nonce: "00".repeat(16) };
    expect(await agent.claimWithHeader(JSON.stringify(unknown))).toMatchObject({
      status: 403,
      body: { error: "unknown_or_expired_nonce" },
    });

    const proof = await agent.helperProof(paired);
    expect((await agent.claimWithHeader(proof)).status).toBe(200);
    expect(await agent.claimWithHeader(proof)).toMatchObject({
      status: 403,
      body: { error: "unknown_or_expired_nonce" },
    });

    const old = await agent.helperProof(paired);
    now += NONCE_LIFETIME_MS + 1;
    expect(await agent.claimWithHeader(old)).toMatchObject({
      status: 403,
      body: { error: "unknown_or_expired_nonce" },
    });
    now = Date.now();

    const direct = await agent.challenge();
    const withDirectNonce = { ...(await helperProof()), nonce: direct.nonce };
    expect(await agent.claimWithHeader(JSON.stringify(withDirectNonce))).toMatchObject({
      status: 403,
      body: { error: "unknown_or_expired_nonce" },
    });
    // Consumed by that attempt: it no longer works on its own path either.
    const signature = await paired.signMessage({ message: direct.message });
    expect(await agent.claimWithBody({ nonce: direct.nonce, signature })).toMatchObject({
      status: 403,
      body: { error: "unknown_or_expired_nonce" },
    });
  });

  it("3. a nonce just under 5 minutes old still works", async () => {
    const proof = await agent.helperProof(paired);
    now += NONCE_LIFETIME_MS;
    expect((await agent.claimWithHeader(proof)).status).toBe(200);
  });

  it("3. the nonce is consumed even when a later step refuses the claim", async () => {
    const proof = await helperProof();
    const wrong = JSON.stringify({ ...proof, domain: "evil.example" });
    expect((await agent.claimWithHeader(wrong)).body.error).toBe("wrong_domain_or_resource");
    expect(await agent.claimWithHeader(JSON.stringify(proof))).toMatchObject({
      status: 403,
      body: { error: "unknown_or_expired_nonce" },
    });
  });

  it("4. a domain or uri other than this application's: 403 wrong_domain_or_resource", async () => {
    for (const change of [
      { domain: "evil.example" },
      { uri: "https://evil.example/api/v1/claim" },
      { uri: "https://agents.example.test/api/v1/claim/" },
    ]) {
      const res = await agent.claimWithHeader(JSON.stringify({ ...(await helperProof()), ...change }));
      expect(res).toMatchObject({ status: 403, body: { error: "wrong_domain_or_resource" } });
    }
  });

  it("5. refusals of verifyHumanProofRequest come back as 403 with the SDK's reason", async () => {
    // An undefined value drops the field (JSON.stringify leaves it out).
    const cases: Array<[string, Record<string, unknown>]> = [
      ["invalid_header", { signature: undefined }],
      ["invalid_message", { version: undefined }],
      ["resource_mismatch", { uri: undefined }],
      ["invalid_issued_at", { issuedAt: "yesterday" }],
      ["invalid_expiration_time", { expirationTime: "soon" }],
      ["invalid_signature_type", { type: "eip1271" }],
      ["invalid_signature", { signature: `0x${"11".repeat(64)}1b` }],
      ["invalid_signature", { address: unpaired.address }],
    ];
    for (const [reason, changes] of cases) {
      const res = await agent.claimWithHeader(JSON.stringify({ ...(await helperProof()), ...changes }));
      expect({ reason, ...res }).toMatchObject({ reason, status: 403, body: { error: reason } });
    }
    // The challenge's own expiry passed by the wall clock while the service's clock still calls its nonce fresh.
    now = Date.now() - NONCE_LIFETIME_MS - 60_000;
    const late = await agent.claimWithHeader(JSON.stringify(await helperProof()));
    expect(late).toMatchObject({ status: 403, body: { error: "message_expired" } });
    expect(await outboxEvents(t.db)).toEqual([]);
  });

  it("5. terms other than the issued challenge's: another chain, version, issue time, statement, expiry or resources is refused", async () => {
    const other = await signHumanProofChallengeEVMUnchecked(
      { ...(await agent.instructions()), supportedChains: [{ chainId: "eip155:1", type: "eip191" }] },
      evmSigner(paired),
      "eip155:1",
    );
    expect(await agent.claimWithHeader(other)).toMatchObject({
      status: 403,
      body: { error: "unsupported_chain" },
    });
    const cases: Array<[string, Partial<HumanProofExtensionInfo>]> = [
      ["invalid_message", { version: "2" }],
      ["invalid_issued_at", { issuedAt: new Date(Date.now() + 3_600_000).toISOString() }],
      ["invalid_issued_at", { issuedAt: new Date(Date.now() - 1_000).toISOString() }],
      ["wrong_domain_or_resource", { resources: ["https://evil.example/api/v1/transfer"] }],
      [
        "wrong_domain_or_resource",
        { resources: ["https://agents.example.test/api/v1/claim", "https://evil.example/api/v1/transfer"] },
      ],
      ["wrong_domain_or_resource", { resources: [] }],
      ["invalid_message", { statement: "I agree to pay evil.example whatever it asks." }],
      ["invalid_message", { statement: undefined }],
      ["invalid_expiration_time", { expirationTime: new Date(Date.now() + 86_400_000).toISOString() }],
      ["invalid_expiration_time", { expirationTime: undefined }],
    ];
    for (const [reason, info] of cases) {
      const issued = await agent.instructions();
      const proof = await signHumanProofChallengeEVMUnchecked(
        { ...issued, info: { ...issued.info, ...info } },
        evmSigner(paired),
        "eip155:45056",
      );
      expect({ reason, ...(await agent.claimWithHeader(proof)) }).toMatchObject({
        reason,
        status: 403,
        body: { error: reason },
      });
    }
    expect(await outboxEvents(t.db)).toEqual([]);
  });

  it("3. a nonce not in the issued format, or not issued by this service, is refused before the nonce store is asked", async () => {
    const odd = ["A".repeat(32), "x".repeat(5000), "00", "00".repeat(16), "ab".repeat(16)];
    for (const nonce of odd) {
      const res = await agent.claimWithHeader(JSON.stringify({ ...(await helperProof()), nonce }));
      expect(res).toMatchObject({ status: 403, body: { error: "unknown_or_expired_nonce" } });
    }
    const stored = await t.db
      .selectFrom("used_proof_nonces")
      .select("nonce")
      .where("nonce", "in", odd)
      .execute();
    expect(stored).toEqual([]);
  });

  it("5. the high-s twin of a valid signature (EIP-2) is refused", async () => {
    const proof = await helperProof();
    const res = await agent.claimWithHeader(
      JSON.stringify({ ...proof, signature: highS(proof.signature as Hex) }),
    );
    expect(res).toMatchObject({ status: 403, body: { error: "invalid_signature" } });
  });

  it("5. a valid proof by an agent with no human: 403 not_registered and a human_not_registered event", async () => {
    const res = await agent.claimWithHeader(await agent.helperProof(unpaired));
    expect(res).toMatchObject({ status: 403, body: { error: "not_registered" } });
    expect(await outboxEvents(t.db)).toEqual([
      {
        type: "human_not_registered",
        subject: expect.stringMatching(/\.agent_auth\.human_not_registered$/),
        data: { did: didFromAddress(unpaired.address), resource: terms.resource },
      },
    ]);
  });

  it("5. the registry cannot be read: 503 verification_unavailable, and the nonce is spent", async () => {
    const proof = await agent.helperProof(paired);
    resolver.failing = true;
    expect(await agent.claimWithHeader(proof)).toMatchObject({
      status: 503,
      body: { error: "verification_unavailable" },
    });
    resolver.failing = false;
    expect((await agent.claimWithHeader(proof)).body.error).toBe("unknown_or_expired_nonce");
    expect(await outboxEvents(t.db)).toEqual([]);
  });

  it("100 concurrent claims replaying one proof: exactly one 200, the rest 403 unknown_or_expired_nonce", async () => {
    const proof = await agent.helperProof(paired);
    const replies = await Promise.all(Array.from({ length: 100 }, () => agent.claimWithHeader(proof)));
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
    expect(
      replies.filter((r) => r.status === 403 && r.body.error === "unknown_or_expired_nonce"),
    ).toHaveLength(99);
  });
});

describe("POST /api/v1/claim, direct path (JSON body)", () => {
  it("GET /api/v1/challenge gives a nonce and a message naming this domain, resource, nonce and issue time", async () => {
    const { nonce, message } = await agent.challenge();
    expect(nonce).toMatch(/^[0-9a-f]{32}$/);
    expect(message).toContain("agents.example.test");
    expect(message).toContain(`URI: ${terms.resource}`);
    expect(message).toContain(`Nonce: ${nonce}`);
    expect(message).toMatch(/Issued At: \d{4}-\d{2}-\d{2}T/);
  });

  it("accepts a signature by a paired agent: 200 { verified, agentDid, humanDid, humanId }, with events", async () => {
    const res = await agent.claimWithBody(await agent.directClaimBody(paired));
    expect(res).toEqual({
      status: 200,
      body: {
        verified: true,
        agentDid: didFromAddress(paired.address),
        humanDid: "did:iden3:billions:main:human1001",
        humanId: "1001",
      },
    });
    const events = await outboxEvents(t.db);
    expect(events.map((e) => e.type)).toEqual(["human_verified", "claim_accepted"]);
    expect(events[1]!.data).toMatchObject({ path: "direct", agentAddress: paired.address, humanId: "1001" });
  });

  it("1. no body, a body that is not JSON, a nonce never issued, used, expired or issued by /instructions: 403 unknown_or_expired_nonce", async () => {
    const expectNonceRefused = (res: { status: number; body: any }) =>
      expect(res).toMatchObject({ status: 403, body: { error: "unknown_or_expired_nonce" } });
    expectNonceRefused(await agent.claimWithBody());
    expectNonceRefused(await agent.claimWithBody(undefined, ""));
    expectNonceRefused(await agent.claimWithBody(undefined, "{oops"));
    expectNonceRefused(await agent.claimWithBody({ nonce: "00".repeat(16), signature: "0x" }));

    const used = await agent.directClaimBody(paired);
    expect((await agent.claimWithBody(used)).status).toBe(200);
    expectNonceRefused(await agent.claimWithBody(used));

    const old = await agent.directClaimBody(paired);
    now += NONCE_LIFETIME_MS + 1;
    expectNonceRefused(await agent.claimWithBody(old));
    now = Date.now();

    const helperNonce = (await agent.instructions()).info.nonce;
    expectNonceRefused(await agent.claimWithBody({ nonce: helperNonce, signature: used.signature }));
  });

  it("2. no signer recoverable from the signature: 403 invalid_signature", async () => {
    for (const signature of [undefined, "", "not hex", "0x1234", `0x${"00".repeat(65)}`]) {
      const { nonce } = await agent.challenge();
      const res = await agent.claimWithBody({ nonce, signature });
      expect({ signature, ...res }).toMatchObject({ status: 403, body: { error: "invalid_signature" } });
    }
  });

  it("2. the high-s twin of a valid signature (EIP-2) is refused", async () => {
    const { nonce, signature } = await agent.directClaimBody(paired);
    expect(await agent.claimWithBody({ nonce, signature: highS(signature as Hex) })).toMatchObject({
      status: 403,
      body: { error: "invalid_signature" },
    });
  });

  it("2. a signature over another message recovers another signer: that agent is not registered", async () => {
    const { nonce } = await agent.challenge();
    const signature = await paired.signMessage({ message: "something else" });
    expect(await agent.claimWithBody({ nonce, signature })).toMatchObject({
      status: 403,
      body: { error: "not_registered" },
    });
  });

  it("3. the registry cannot be read: 503 verification_unavailable", async () => {
    const body = await agent.directClaimBody(paired);
    resolver.failing = true;
    expect(await agent.claimWithBody(body)).toMatchObject({
      status: 503,
      body: { error: "verification_unavailable" },
    });
  });

  it("4. no ownership record for the signer: 403 not_registered, with a human_not_registered event", async () => {
    expect(await agent.claimWithBody(await agent.directClaimBody(unpaired))).toMatchObject({
      status: 403,
      body: { error: "not_registered" },
    });
    expect((await outboxEvents(t.db)).map((e) => [e.type, e.data.did])).toEqual([
      ["human_not_registered", didFromAddress(unpaired.address)],
    ]);
  });

  it("a DID in the body is never read: the agent is the signer", async () => {
    const body = {
      ...(await agent.directClaimBody(unpaired)),
      did: didFromAddress(paired.address),
      address: paired.address,
    };
    expect((await agent.claimWithBody(body)).body.error).toBe("not_registered");
  });

  it("100 concurrent claims replaying one signature: exactly one 200, the rest 403 unknown_or_expired_nonce", async () => {
    const body = await agent.directClaimBody(paired);
    const replies = await Promise.all(Array.from({ length: 100 }, () => agent.claimWithBody(body)));
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
    expect(
      replies.filter((r) => r.status === 403 && r.body.error === "unknown_or_expired_nonce"),
    ).toHaveLength(99);
  });
});

describe("documentation", () => {
  it("describes the three routes in the OpenAPI document", async () => {
    const doc = (await (await fetch(`${service.url}/docs/json`)).json()) as { paths: Record<string, object> };
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(["/api/v1/instructions", "/api/v1/challenge", "/api/v1/claim"]),
    );
  });
});

describe("nonce purge", () => {
  it("deletes redemptions past their nonce's lifetime and keeps fresh ones", async () => {
    await t.db.deleteFrom("used_proof_nonces").execute();
    const stale = await agent.directClaimBody(paired);
    expect((await agent.claimWithBody(stale)).status).toBe(200);
    now += NONCE_LIFETIME_MS + 1;
    const fresh = await agent.directClaimBody(paired);
    expect((await agent.claimWithBody(fresh)).status).toBe(200);
    expect(await new PostgresUsedNonceStore(t.pool).purgeExpired(new Date(now))).toBe(1);
    const left = await t.db.selectFrom("used_proof_nonces").select("nonce").execute();
    expect(left.map((r) => r.nonce)).toEqual([fresh.nonce]);
  });
});

describe("nonce keys", () => {
  it("a nonce issued under the previous key redeems once after a rotation; one under an unknown key is refused", async () => {
    const [oldKey, newKey, otherKey] = ["o", "n", "x"].map((c) => c.repeat(32)) as [string, string, string];
    const start = (keys: string[]) => startOrders({ challengeNonces: createChallengeNonces({ keys }) });
    const [before, after, foreign] = await Promise.all([
      start([oldKey]),
      start([newKey, oldKey]),
      start([otherKey]),
    ]);
    try {
      const [beforeAgent, afterAgent, foreignAgent] = [before, after, foreign].map((s) =>
        agentClient(s.url),
      ) as [ReturnType<typeof agentClient>, ReturnType<typeof agentClient>, ReturnType<typeof agentClient>];
      const direct = await beforeAgent.directClaimBody(paired);
      const helper = await beforeAgent.helperProof(paired);
      expect((await afterAgent.claimWithBody(direct)).status).toBe(200);
      expect((await afterAgent.claimWithHeader(helper)).status).toBe(200);
      expect((await afterAgent.claimWithBody(direct)).body.error).toBe("unknown_or_expired_nonce");
      expect((await afterAgent.claimWithHeader(helper)).body.error).toBe("unknown_or_expired_nonce");
      // Issued by the new key: the replicas not yet rotated refuse it, the rotated ones accept it.
      expect((await beforeAgent.claimWithBody(await afterAgent.directClaimBody(paired))).body.error).toBe(
        "unknown_or_expired_nonce",
      );
      expect(await afterAgent.claimWithBody(await foreignAgent.directClaimBody(paired))).toMatchObject({
        status: 403,
        body: { error: "unknown_or_expired_nonce" },
      });
      expect(await afterAgent.claimWithHeader(await foreignAgent.helperProof(paired))).toMatchObject({
        status: 403,
        body: { error: "unknown_or_expired_nonce" },
      });
    } finally {
      await Promise.all([before, after, foreign].map((s) => s.close()));
    }
  });
});

describe("one claim per human (policy on)", () => {
  it("a second claim by the same human, through another agent or the same one, is 409 already_claimed", async () => {
    const exclusive = await startOrders({ oneClaimPerHuman: true });
    try {
      const client = agentClient(exclusive.url);
      const [first, second, other] = [0, 1, 2].map(() => privateKeyToAccount(generatePrivateKey()));
      resolver.pair(first!, "2002");
      resolver.pair(second!, "2002");
      resolver.pair(other!, "3003");

      expect((await client.claimWithBody(await client.directClaimBody(first!))).status).toBe(200);
      expect(await client.claimWithHeader(await client.helperProof(second!))).toMatchObject({
        status: 409,
        body: { error: "already_claimed" },
      });
      expect((await client.claimWithBody(await client.directClaimBody(first!))).body.error).toBe(
        "already_claimed",
      );
      expect((await client.claimWithHeader(await client.helperProof(other!))).status).toBe(200);

      const claims = await t.db
        .selectFrom("human_claims")
        .select(["human_id", "agent_address"])
        .orderBy("human_id")
        .execute();
      expect(claims).toEqual([
        { human_id: "2002", agent_address: first!.address },
        { human_id: "3003", agent_address: other!.address },
      ]);
      const types = (await outboxEvents(t.db)).map((e) => `${e.type}:${e.data.humanId}`);
      expect(types.filter((e) => e.startsWith("claim_accepted"))).toEqual([
        "claim_accepted:2002",
        "claim_accepted:3003",
      ]);
      expect(types.filter((e) => e.startsWith("human_verified"))).toHaveLength(4);
    } finally {
      await exclusive.close();
    }
  });

  it("concurrent first claims of one human through 10 agents: exactly one 200", async () => {
    const exclusive = await startOrders({ oneClaimPerHuman: true });
    try {
      const client = agentClient(exclusive.url);
      const agents = Array.from({ length: 10 }, () => privateKeyToAccount(generatePrivateKey()));
      for (const a of agents) resolver.pair(a, "4004");
      const bodies = await Promise.all(agents.map((a) => client.directClaimBody(a)));
      const replies = await Promise.all(bodies.map((b) => client.claimWithBody(b)));
      expect(replies.map((r) => r.status).sort()).toEqual([200, ...Array(9).fill(409)]);
    } finally {
      await exclusive.close();
    }
  });

  it("with the policy off, one human's agents all claim", async () => {
    const [a, b] = [0, 1].map(() => privateKeyToAccount(generatePrivateKey()));
    resolver.pair(a!, "5005");
    resolver.pair(b!, "5005");
    expect((await agent.claimWithBody(await agent.directClaimBody(a!))).status).toBe(200);
    expect((await agent.claimWithBody(await agent.directClaimBody(b!))).status).toBe(200);
    expect((await agent.claimWithBody(await agent.directClaimBody(a!))).status).toBe(200);
  });
});
