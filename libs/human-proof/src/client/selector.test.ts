import { didFromAddress } from "@humanpass/identity";
import type { PaymentRequirements } from "@x402/core/types";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { account } from "../../test/proof-fixtures.ts";
import {
  type AttestationsApiStandIn,
  humanFromAddress,
  ownershipAttestation,
  startAttestationsApiStandIn,
} from "../../test/support/attestations-api-stand-in.ts";
import { DEFAULT_AGENT_OWNERSHIP_SCHEMA } from "../common/constants.ts";
import { createAttestationAwareSelector } from "./selector.ts";

const REVIEW = `0x${"ab".repeat(32)}`;
const human = humanFromAddress(account(1000).address);
const pairedDid = didFromAddress(account(1).address, "main");
const unpairedDid = didFromAddress(account(2).address, "main");
let api: AttestationsApiStandIn;

beforeAll(async () => {
  api = await startAttestationsApiStandIn({
    attestations: [ownershipAttestation(human, account(1).address)],
    nullifiers: {},
  });
});
afterAll(() => api.close());

const tier = (amount: string, requiredAttestations?: string[]): PaymentRequirements => ({
  scheme: "exact",
  network: "eip155:45056",
  amount,
  asset: "0x0000000000000000000000000000000000000001",
  payTo: "0x0000000000000000000000000000000000000002",
  maxTimeoutSeconds: 60,
  extra: requiredAttestations ? { requiredAttestations } : {},
});
const standard = tier("1000");
const discounted = tier("500", [DEFAULT_AGENT_OWNERSHIP_SCHEMA]);
const reviewed = tier("100", [DEFAULT_AGENT_OWNERSHIP_SCHEMA, REVIEW]);

describe("createAttestationAwareSelector", () => {
  it("picks the discounted tier only when the DID holds every required schema", async () => {
    const paired = createAttestationAwareSelector(pairedDid, undefined, {
      attestationsApiBaseUrl: api.attestationsUrl,
    });
    expect(paired.selector(2, [standard, discounted])).toBe(standard); // nothing known before refresh
    await paired.refresh({ accepts: [reviewed, standard, discounted] });
    expect(paired.selector(2, [reviewed, standard, discounted])).toBe(discounted);

    const unpaired = createAttestationAwareSelector(unpairedDid, undefined, {
      attestationsApiBaseUrl: api.attestationsUrl,
    });
    await unpaired.refresh({ accepts: [standard, discounted] });
    expect(unpaired.selector(2, [discounted, standard])).toBe(standard);
  });

  it("picks the standard tier after disqualify()", async () => {
    const selector = createAttestationAwareSelector(pairedDid, undefined, {
      attestationsApiBaseUrl: api.attestationsUrl,
    });
    await selector.refresh();
    expect(selector.selector(2, [standard, discounted])).toBe(discounted);
    selector.disqualify();
    await selector.refresh();
    expect(selector.selector(2, [standard, discounted])).toBe(standard);
  });

  it("counts schemas it cannot check as not held", async () => {
    const selector = createAttestationAwareSelector(pairedDid, undefined, {
      attestationsApiBaseUrl: "http://127.0.0.1:1/api/v1/attestations",
    });
    await selector.refresh({ accepts: [standard, discounted] });
    expect(selector.selector(2, [discounted, standard])).toBe(standard);
  });
});
