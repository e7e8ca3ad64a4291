import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  attestationRecorded,
  getJson,
  type Harness,
  party,
  schemaRegistered,
  startHarness,
} from "./support/harness.ts";

/** Rule 4 of spec 2 (follow `nextPage` until null) while the indexer keeps appending attestations. */
let h: Harness;
const schema = schemaRegistered();
const recipient = party();

beforeAll(async () => {
  h = await startHarness("att_paging");
  await h.publish("CHAIN", "schema_registered", schema);
});
afterAll(async () => {
  await h?.close();
});

async function record(count: number): Promise<string[]> {
  const events = Array.from({ length: count }, () =>
    attestationRecorded(schema.schemaId, party(), recipient),
  );
  const eventIds = [];
  for (const e of events) eventIds.push(await h.publishOnly("CHAIN", "attestation_recorded", e));
  await h.waitApplied(eventIds);
  return events.map((e) => e.attestationId);
}

async function walk(url: (page: number) => string, between: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  let page: number | null = 1;
  while (page !== null) {
    const { status, body } = await getJson(h.app, url(page));
    expect(status).toBe(200);
    seen.push(...body.data.map((d: { id: string }) => d.id));
    page = body.nextPage;
    if (page !== null) await between();
  }
  return seen;
}

describe("paging through nextPage while attestations keep arriving", () => {
  const cases: Array<[string, (page: number) => string]> = [
    [
      "the attestations list",
      (p) => `/api/v1/attestations?schemaId=${schema.schemaId}&page_size=7&page_number=${p}`,
    ],
    [
      "an identity's list",
      (p) => `/api/v1/identities/${recipient.did}/attestations?page_size=5&page_number=${p}`,
    ],
  ];
  it.each(cases)("%s: every item exactly once, in the order of the final list", async (_name, url) => {
    const existing = await record(23);
    let appended: string[] = [];
    // Between every two page reads, three new attestations are recorded and applied.
    const seen = await walk(url, async () => {
      appended = [...appended, ...(await record(3))];
    });
    expect(new Set(seen).size).toBe(seen.length);
    const all = await walk(
      (p) => url(p).replace(/page_size=\d+/, "page_size=100"),
      async () => {},
    );
    expect(seen).toEqual(all.slice(0, seen.length));
    for (const id of existing) expect(seen).toContain(id);
    // The walk ran into appended items (the lists grew while it went) and saw them too.
    expect(appended.length).toBeGreaterThan(0);
    expect(seen.filter((id) => appended.includes(id)).length).toBeGreaterThan(0);
  });
});

describe("paging parameters", () => {
  it("takes decimal digits only: hex, exponents, signs and spaces are refused with 400", async () => {
    for (const written of ["0x10", "1e1", "+5", " 5", "0b11", "5.0"]) {
      const { status, body } = await getJson(
        h.app,
        `/api/v1/attestations?schemaId=${schema.schemaId}&page_size=${encodeURIComponent(written)}`,
      );
      expect({ written, status, error: body.error }).toEqual({
        written,
        status: 400,
        error: "invalid_request",
      });
    }
    const decimal = await getJson(h.app, `/api/v1/attestations?schemaId=${schema.schemaId}&page_size=16`);
    expect(decimal.status).toBe(200);
    expect(decimal.body.pageSize).toBe(16);
  });
});
