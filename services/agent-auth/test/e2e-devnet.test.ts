import { signHumanProofChallengeEVM as billionsSign } from "@billionsnetwork/x402-human-proof-client";
import { identityFromAddress } from "@humanpass/devnet";
import { didFromAddress } from "@humanpass/identity";
import { eventually, startServiceMain } from "@humanpass/testing";
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NONCE_LIFETIME_MS } from "../src/index.ts";
import { agentClient, evmSigner } from "./harness.ts";
import {
  type FaultyProxy,
  type Human,
  type RunningApp,
  type Stack,
  startFaultyProxy,
  startStack,
} from "./stack.ts";

/**
 * agent-auth against the whole real chain of custody: pairings recorded on the devnet, indexed by the
 * chain-indexer, served by the attestations-api, nullifiers from the verifier's events.
 */
let stack: Stack;
let service: RunningApp;
let agent: ReturnType<typeof agentClient>;
let human: Human;
let paired: PrivateKeyAccount;
let skewMs = 0;

const newAgent = () => privateKeyToAccount(generatePrivateKey());

beforeAll(async () => {
  stack = await startStack("agent_auth_e2e");
  service = await stack.startAgentAuth({ clock: () => Date.now() + skewMs });
  agent = agentClient(service.url);
  human = await stack.verifiedHuman();
  paired = newAgent();
  await stack.pair(human, paired);
}, 180_000);

afterAll(async () => {
  await stack?.close();
});

describe("a paired agent, through the real registry", () => {
  it("helper path: 200 { verified, agentDid }", async () => {
    expect(await agent.claimWithHeader(await agent.helperProof(paired))).toEqual({
      status: 200,
      body: { verified: true, agentDid: didFromAddress(paired.address) },
    });
  });

  it("direct path: 200 with the human's DID and nullifier as humanId", async () => {
    expect(await agent.claimWithBody(await agent.directClaimBody(paired))).toEqual({
      status: 200,
      body: {
        verified: true,
        agentDid: didFromAddress(paired.address),
        humanDid: human.did,
        humanId: human.nullifier,
      },
    });
  });

  it("publishes human_verified and claim_accepted on AGENT_AUTH through the outbox", async () => {
    // The earlier claims' events may still be on their way (the relay gathers before it publishes): this claim's
    // are the ones created after it was sent.
    const sent = new Date().toISOString();
    await agent.claimWithBody(await agent.directClaimBody(paired));
    const published = await eventually(() => {
      const mine = stack.events.filter((event) => event.time >= sent);
      return mine.length >= 2 && mine;
    });
    expect(published.map((e) => [e.type, e.source])).toEqual([
      ["human_verified", "agent-auth"],
      ["claim_accepted", "agent-auth"],
    ]);
    expect(published[1]!.data).toMatchObject({
      path: "direct",
      humanId: human.nullifier,
      humanDid: human.did,
    });
  });
});

describe("an agent using Billions' published client (@billionsnetwork/x402-human-proof-client 0.1.7)", () => {
  it("signs the /instructions challenge into a HUMAN-PROOF that agent-auth accepts", async () => {
    const challenge = await agent.instructions();
    const proof = await billionsSign(challenge, evmSigner(paired), "eip155:45056");
    expect(await agent.claimWithHeader(proof)).toEqual({
      status: 200,
      body: { verified: true, agentDid: didFromAddress(paired.address) },
    });
  });
});

describe("who is not verified", () => {
  it("an agent no human paired: 403 not_registered on both paths, with human_not_registered", async () => {
    const stranger = newAgent();
    expect((await agent.claimWithHeader(await agent.helperProof(stranger))).body.error).toBe(
      "not_registered",
    );
    expect((await agent.claimWithBody(await agent.directClaimBody(stranger))).body.error).toBe(
      "not_registered",
    );
    await eventually(
      () =>
        stack.events.filter(
          (e) => e.type === "human_not_registered" && e.data.did === didFromAddress(stranger.address),
        ).length === 2,
    );
  });

  it("an agent paired by someone with no nullifier (never verified): 403 not_registered", async () => {
    const account = newAgent();
    const { did, iden3Id } = identityFromAddress(account.address);
    const unverified: Human = { account, did, userId: iden3Id.toString(), nullifier: "none" };
    const agentOfUnverified = newAgent();
    await stack.pair(unverified, agentOfUnverified);
    expect((await agent.claimWithBody(await agent.directClaimBody(agentOfUnverified))).body.error).toBe(
      "not_registered",
    );
    expect((await agent.claimWithHeader(await agent.helperProof(agentOfUnverified))).body.error).toBe(
      "not_registered",
    );
  });
});

describe("two agents of one human", () => {
  it("resolve to the same humanId; with one claim per human, the second agent gets 409 already_claimed", async () => {
    const someone = await stack.verifiedHuman();
    const [first, second] = [newAgent(), newAgent()];
    await stack.pair(someone, first);
    await stack.pair(someone, second);
    const a = await agent.claimWithBody(await agent.directClaimBody(first));
    const b = await agent.claimWithBody(await agent.directClaimBody(second));
    expect([a.body.humanId, b.body.humanId]).toEqual([someone.nullifier, someone.nullifier]);
    expect(a.body.agentDid).not.toBe(b.body.agentDid);

    const exclusive = await stack.startAgentAuth({ oneClaimPerHuman: true });
    const client = agentClient(exclusive.url);
    expect((await client.claimWithHeader(await client.helperProof(first))).status).toBe(200);
    expect(await client.claimWithBody(await client.directClaimBody(second))).toMatchObject({
      status: 409,
      body: { error: "already_claimed" },
    });
  });
});

describe("replays and nonces", () => {
  it("100 concurrent claims replaying one proof (helper): exactly one 200, the rest 403 unknown_or_expired_nonce", async () => {
    const proof = await agent.helperProof(paired);
    const replies = await Promise.all(Array.from({ length: 100 }, () => agent.claimWithHeader(proof)));
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
    expect(
      replies.filter((r) => r.status === 403 && r.body.error === "unknown_or_expired_nonce"),
    ).toHaveLength(99);
  });

  it("100 concurrent claims replaying one signature (direct): exactly one 200, the rest 403 unknown_or_expired_nonce", async () => {
    const body = await agent.directClaimBody(paired);
    const replies = await Promise.all(Array.from({ length: 100 }, () => agent.claimWithBody(body)));
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
    expect(
      replies.filter((r) => r.status === 403 && r.body.error === "unknown_or_expired_nonce"),
    ).toHaveLength(99);
  });

  it("a nonce older than 5 minutes: 403; a /challenge nonce in a HUMAN-PROOF header: 403", async () => {
    const body = await agent.directClaimBody(paired);
    skewMs = NONCE_LIFETIME_MS + 1;
    try {
      expect((await agent.claimWithBody(body)).body.error).toBe("unknown_or_expired_nonce");
    } finally {
      skewMs = 0;
    }
    const { nonce } = await agent.challenge();
    const proof = { ...JSON.parse(await agent.helperProof(paired)), nonce };
    expect(await agent.claimWithHeader(JSON.stringify(proof))).toMatchObject({
      status: 403,
      body: { error: "unknown_or_expired_nonce" },
    });
  });
});

describe("when the registry cannot be read", () => {
  it("attestations API stopped: 503 verification_unavailable on both paths; started again: 200", async () => {
    const fresh = newAgent();
    await stack.pair(human, fresh);
    await stack.stopApi();
    try {
      expect(await agent.claimWithBody(await agent.directClaimBody(fresh))).toMatchObject({
        status: 503,
        body: { error: "verification_unavailable" },
      });
      expect(await agent.claimWithHeader(await agent.helperProof(fresh))).toMatchObject({
        status: 503,
        body: { error: "verification_unavailable" },
      });
    } finally {
      await stack.startApi();
    }
    expect((await agent.claimWithBody(await agent.directClaimBody(fresh))).status).toBe(200);
    expect((await agent.claimWithHeader(await agent.helperProof(fresh))).status).toBe(200);
  });

  describe("behind a proxy that breaks one endpoint", () => {
    let proxy: FaultyProxy;
    let client: ReturnType<typeof agentClient>;

    beforeAll(async () => {
      proxy = await startFaultyProxy(stack.apiUrl);
      client = agentClient((await stack.startAgentAuth({ apiUrl: proxy.apiUrl, cacheTtlMs: 0 })).url);
    });
    afterAll(async () => proxy?.close());

    it("direct 3: the list answers with a 503 (after retries) or without a data array: 503 verification_unavailable", async () => {
      for (const fault of ["unavailable", "no-data-array"] as const) {
        proxy.faults.set("/attestations", fault);
        const res = await client.claimWithBody(await client.directClaimBody(paired));
        expect({ fault, ...res }).toMatchObject({ status: 503, body: { error: "verification_unavailable" } });
      }
      proxy.faults.clear();
      expect((await client.claimWithBody(await client.directClaimBody(paired))).status).toBe(200);
    });

    it("direct 5: the nullifier endpoint fails: 503 verification_unavailable, never not_registered", async () => {
      proxy.faults.set("/nullifier", "unavailable");
      expect((await client.claimWithBody(await client.directClaimBody(paired))).body.error).toBe(
        "verification_unavailable",
      );
      expect((await client.claimWithHeader(await client.helperProof(paired))).body.error).toBe(
        "verification_unavailable",
      );
      proxy.faults.clear();
    });
  });
});

describe("revoking the pairing on the devnet", () => {
  it("turns the next claim into 403 not_registered within seconds, though the lookup was cached", async () => {
    const someone = await stack.verifiedHuman();
    const revoked = newAgent();
    const attestationId = await stack.pair(someone, revoked);
    expect((await agent.claimWithBody(await agent.directClaimBody(revoked))).status).toBe(200);
    expect((await agent.claimWithHeader(await agent.helperProof(revoked))).status).toBe(200);

    await stack.revoke(attestationId);
    // The cache lives 10 minutes here: only the revocation event can end it this soon.
    await eventually(
      async () => (await agent.claimWithBody(await agent.directClaimBody(revoked))).status === 403,
      10_000,
      200,
    );
    expect((await agent.claimWithBody(await agent.directClaimBody(revoked))).body.error).toBe(
      "not_registered",
    );
    expect((await agent.claimWithHeader(await agent.helperProof(revoked))).body.error).toBe("not_registered");
  });

  it("does the same with the cache off", async () => {
    const uncached = agentClient((await stack.startAgentAuth({ cacheTtlMs: 0 })).url);
    const someone = await stack.verifiedHuman();
    const revoked = newAgent();
    const attestationId = await stack.pair(someone, revoked);
    expect((await uncached.claimWithBody(await uncached.directClaimBody(revoked))).status).toBe(200);
    await stack.revoke(attestationId);
    await eventually(
      async () => (await uncached.claimWithBody(await uncached.directClaimBody(revoked))).status === 403,
      10_000,
      200,
    );
    expect((await uncached.claimWithHeader(await uncached.helperProof(revoked))).body.error).toBe(
      "not_registered",
    );
  });
});

describe("the service as deployed (main.ts in its own process)", () => {
  it("serves claims, publishes its events, drops a revoked pairing from its cache and stops cleanly on SIGTERM", async () => {
    // A replica of the in-process apps above: same database and streams, its own cache.
    const service = await startServiceMain("agent-auth", {
      DATABASE_URL: stack.database.url,
      EVENTS_PREFIX: stack.topology.prefix,
      PUBLIC_URL: "https://agents.example.test",
      OWNERSHIP_SCHEMA_ID: stack.ownershipSchema,
      ATTESTATIONS_API_URL: stack.apiUrl,
    });
    try {
      expect((await fetch(`${service.url}/readyz`)).status).toBe(200);
      const client = agentClient(service.url);
      const someone = await stack.verifiedHuman();
      const deployedAgent = newAgent();
      const attestationId = await stack.pair(someone, deployedAgent);
      expect(await client.claimWithBody(await client.directClaimBody(deployedAgent))).toMatchObject({
        status: 200,
        body: { humanId: someone.nullifier },
      });
      await eventually(() =>
        stack.events.some(
          (e) => e.type === "claim_accepted" && e.data.agentAddress === deployedAgent.address,
        ),
      );

      await stack.revoke(attestationId);
      await eventually(
        async () => (await client.claimWithBody(await client.directClaimBody(deployedAgent))).status === 403,
        10_000,
        200,
      );
      expect(await service.stop()).toBe(0);
    } finally {
      await service.stop();
    }
  });
});
