import type { HumanLookup } from "@humanpass/attestations-client";
import type { HumanResolution } from "@humanpass/human-proof";
import { didFromAddress } from "@humanpass/identity";
import { createMetrics } from "@humanpass/telemetry";
import { sampleValue, unboundedLabels } from "@humanpass/testing";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  agentClient,
  type RunningAgentAuth,
  setUpDatabase,
  startAgentAuth,
  type TestDb,
  testTerms,
} from "./harness.ts";

const paired = privateKeyToAccount(generatePrivateKey());
const resolution: HumanResolution = {
  humanId: "1001",
  verifiedAt: "2026-11-01T10:00:00.000Z",
  attestationId: `0x${"1001".padStart(64, "0")}`,
  humanDid: "did:iden3:billions:main:human1001",
  humanAddress: "0x000000000000000000000000000000000000dEaD",
  agentDid: didFromAddress(paired.address),
  agentAddress: paired.address,
};
/** Knows one pairing: `paired`'s. */
const resolver: HumanLookup = {
  byAddress: async (address) => (address.toLowerCase() === paired.address.toLowerCase() ? resolution : null),
  byDid: async (did) => (did === resolution.agentDid ? resolution : null),
};
const metrics = createMetrics({ serviceName: "agent-auth" });
let t: TestDb;
let service: RunningAgentAuth;

beforeAll(async () => {
  t = await setUpDatabase("agent_auth_metrics");
  service = await startAgentAuth({ db: t.db, pool: t.pool, resolver, terms: testTerms(), metrics });
});

afterAll(async () => {
  await service?.close();
  await t?.db.destroy();
  await t?.database.drop();
  await metrics.shutdown();
});

describe("agent-auth /metrics", () => {
  it("counts claims by path and outcome, and requests by route template", async () => {
    const agent = agentClient(service.url);
    expect((await agent.claimWithHeader(await agent.helperProof(paired))).status).toBe(200);
    expect((await agent.claimWithHeader("")).status).toBe(400);
    expect((await agent.claimWithBody(await agent.directClaimBody(paired))).status).toBe(200);
    expect((await agent.claimWithBody({ nonce: "f".repeat(32), signature: "0x00" })).status).toBe(403);

    const text = await (await fetch(`${service.url}/metrics`)).text();
    const claims = (path: string, outcome: string) =>
      sampleValue(text, "humanpass_agent_auth_claims_total", { path, outcome });
    expect(claims("helper", "accepted")).toBe(1);
    expect(claims("helper", "missing_header")).toBe(1);
    expect(claims("direct", "accepted")).toBe(1);
    expect(claims("direct", "unknown_or_expired_nonce")).toBe(1);
    expect(
      sampleValue(text, "http_server_request_duration_count", {
        http_route: "/api/v1/claim",
        http_request_method: "POST",
      }),
    ).toBe(4);
    expect(sampleValue(text, "http_server_request_duration_count", { http_route: "/api/v1/challenge" })).toBe(
      1,
    );
    // Nonces, signatures, addresses and DIDs went through: none became a label.
    expect(unboundedLabels(text)).toEqual([]);
  });
});
