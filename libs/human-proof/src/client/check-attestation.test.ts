import { didFromAddress } from "@humanpass/identity";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { account } from "../../test/proof-fixtures.ts";
import {
  type AttestationsApiStandIn,
  humanFromAddress,
  ownershipAttestation,
  startAttestationsApiStandIn,
} from "../../test/support/attestations-api-stand-in.ts";
import { DEFAULT_AGENT_OWNERSHIP_SCHEMA } from "../common/constants.ts";
import { checkAttestation } from "./check-attestation.ts";

const human = humanFromAddress(account(1000).address);
const paired = didFromAddress(account(1).address, "main");
const revoked = didFromAddress(account(2).address, "main");
let api: AttestationsApiStandIn;

beforeAll(async () => {
  api = await startAttestationsApiStandIn({
    attestations: [
      ownershipAttestation(human, account(1).address),
      ownershipAttestation(human, account(2).address, { revoked: true }),
    ],
    nullifiers: {},
  });
});
afterAll(() => api.close());

describe("checkAttestation", () => {
  const options = () => ({ attestationsApiBaseUrl: api.attestationsUrl });

  it("is true for a held schema and false for a revoked or absent one", async () => {
    expect(await checkAttestation(paired, DEFAULT_AGENT_OWNERSHIP_SCHEMA, options())).toBe(true);
    expect(await checkAttestation(revoked, DEFAULT_AGENT_OWNERSHIP_SCHEMA, options())).toBe(false);
    expect(await checkAttestation(paired, `0x${"ee".repeat(32)}`, options())).toBe(false);
  });

  it("is false when the API answers with an error status", async () => {
    api.failWith(503);
    try {
      expect(await checkAttestation(paired, DEFAULT_AGENT_OWNERSHIP_SCHEMA, options())).toBe(false);
    } finally {
      api.failWith(null);
    }
  });

  it("throws when the API cannot be reached", async () => {
    await expect(
      checkAttestation(paired, DEFAULT_AGENT_OWNERSHIP_SCHEMA, {
        attestationsApiBaseUrl: "http://127.0.0.1:1/api/v1/attestations",
      }),
    ).rejects.toThrow(/unreachable/);
  });
});
