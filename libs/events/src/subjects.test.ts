import { describe, expect, it } from "vitest";
import { subjectMatches } from "./subjects.ts";

describe("subjectMatches", () => {
  it("matches a literal subject only by itself", () => {
    expect(subjectMatches("chain.attestation_recorded", "chain.attestation_recorded")).toBe(true);
    expect(subjectMatches("chain.attestation_recorded", "chain.attestation_revoked")).toBe(false);
    expect(subjectMatches("chain.attestation_recorded", "chain.attestation_recorded.extra")).toBe(false);
  });

  it("takes `*` for exactly one token", () => {
    expect(subjectMatches("chain.*", "chain.attestation_recorded")).toBe(true);
    expect(subjectMatches("*.attestation_recorded", "chain.attestation_recorded")).toBe(true);
    expect(subjectMatches("chain.*", "chain")).toBe(false);
    expect(subjectMatches("chain.*", "chain.a.b")).toBe(false);
  });

  it("takes a trailing `>` for one token or more, never none", () => {
    expect(subjectMatches("chain.>", "chain.attestation_recorded")).toBe(true);
    expect(subjectMatches("chain.>", "chain.a.b.c")).toBe(true);
    expect(subjectMatches("chain.>", "chain")).toBe(false);
    expect(subjectMatches(">", "chain.attestation_recorded")).toBe(true);
    expect(subjectMatches("payments.>", "chain.attestation_recorded")).toBe(false);
  });
});
