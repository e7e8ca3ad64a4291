import { describe, expect, it } from "vitest";
import { intersectSubjects, planConsumers } from "./subjects.ts";

describe("intersectSubjects", () => {
  it.each([
    ["chain.>", "chain.attestation_recorded", "chain.attestation_recorded"],
    ["chain.>", "*.attestation_recorded", "chain.attestation_recorded"],
    ["payments.>", ">", "payments.>"],
    ["payments.>", "payments.>", "payments.>"],
    ["p.payments.>", "p.*.human_verified", "p.payments.human_verified"],
    ["chain.>", "payments.>", undefined],
    ["chain.>", "chain", undefined],
    ["a.b", "a.b.c", undefined],
    ["a.*", "a.b", "a.b"],
  ])("%s ∩ %s = %s", (a, b, expected) => {
    expect(intersectSubjects(a, b)).toBe(expected);
    expect(intersectSubjects(b, a)).toBe(expected);
  });
});

describe("planConsumers", () => {
  const streams = [
    { stream: "CHAIN", subjects: ["chain.>"] },
    { stream: "PAYMENTS", subjects: ["payments.>"] },
    { stream: "AGENT_AUTH", subjects: ["agent_auth.>"] },
  ];

  it("follows every stream whole when no subject is given", () => {
    expect(planConsumers(streams, [])).toEqual([
      { stream: "CHAIN" },
      { stream: "PAYMENTS" },
      { stream: "AGENT_AUTH" },
    ]);
  });

  it("gives each overlapping stream one consumer per subject, and none to the others", () => {
    expect(planConsumers(streams, ["*.human_verified", "payments.max_use_exceeded", "chain.>"])).toEqual([
      { stream: "CHAIN" },
      { stream: "PAYMENTS", filter: "payments.human_verified" },
      { stream: "PAYMENTS", filter: "payments.max_use_exceeded" },
      { stream: "AGENT_AUTH", filter: "agent_auth.human_verified" },
    ]);
  });

  it("returns nothing for a subject no stream carries", () => {
    expect(planConsumers(streams, ["orders.created"])).toEqual([]);
  });
});
