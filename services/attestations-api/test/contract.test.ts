import { encodeAbiParameters } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../src/app.ts";
import {
  api,
  attestationRecorded,
  attestationRevoked,
  getJson,
  type Harness,
  logger,
  party,
  randomAddress,
  randomHex32,
  schemaRegistered,
  startHarness,
  uniquenessVerified,
} from "./support/harness.ts";

/**
 * Spec 2 seen from a client: every endpoint, field and error, against a read model filled by events that went
 * through JetStream.
 */
let h: Harness;
const relay = randomAddress();
const human1 = party();
const human2 = party();
const [agent1, agent2, agent3, agent4] = [party(), party(), party(), party()];
const ownership = schemaRegistered({ name: "AgentOwnership", schema: "bytes data", revocable: false });
const review = schemaRegistered({
  name: "Review",
  schema: "uint8 stars,string comment",
  revocable: true,
  registererIden3Id: human2.iden3Id,
  resolver: "0x00000000000000000000000000000000000000AA",
});
const legacy = schemaRegistered({ name: "", schema: "string note" });
// Human 1 paired two agents through the relay; human 2 one agent with their own wallet.
const own1 = attestationRecorded(ownership.schemaId, { ...human1, address: relay }, agent1, {
  revocable: false,
});
const own2 = attestationRecorded(ownership.schemaId, { ...human1, address: relay }, agent2, {
  revocable: false,
});
const own3 = attestationRecorded(ownership.schemaId, human2, agent3, { revocable: false });
const reviewData = encodeAbiParameters([{ type: "uint8" }, { type: "string" }], [5, "works as advertised"]);
const expiredReview = attestationRecorded(review.schemaId, human2, agent1, {
  data: reviewData,
  expirationTime: 1_700_000_000,
  creationTime: 1_690_000_000,
});
const revokedPairing = attestationRecorded(ownership.schemaId, human1, agent4, { revocable: true });
const revocation = attestationRevoked(revokedPairing.attestationId, agent4, {
  revocationTime: 1_765_000_000,
});
const USER_ID = human1.iden3Id;
const NULLIFIER = "9876543210987654321098765432109876543210";

const ids = (body: { data: Array<{ id: string }> }) => body.data.map((d) => d.id);

beforeAll(async () => {
  h = await startHarness("att_contract");
  const events: Array<[string, unknown]> = [
    ["schema_registered", ownership],
    ["schema_registered", review],
    ["schema_registered", legacy],
    ["attestation_recorded", own1],
    ["attestation_recorded", own2],
    ["attestation_recorded", own3],
    ["attestation_recorded", expiredReview],
    ["attestation_recorded", revokedPairing],
    ["attestation_revoked", revocation],
  ];
  const published = [];
  for (const [type, data] of events) published.push(await h.publishOnly("CHAIN", type, data));
  published.push(
    await h.publishOnly("VERIFIER", "uniqueness_verified", uniquenessVerified(USER_ID, NULLIFIER)),
  );
  await h.waitApplied(published);
});

afterAll(async () => {
  await h?.close();
});

describe("GET /attestations: list item fields", () => {
  let item: Record<string, any>;
  beforeAll(async () => {
    const { body } = await getJson(
      h.app,
      api(`/attestations?schemaId=${ownership.schemaId}&recipientDid=${agent1.did}`),
    );
    item = body.data[0];
  });
  const expected: Array<[string, () => unknown]> = [
    ["id", () => own1.attestationId],
    ["creationTime", () => own1.creationTime],
    [
      "schemaInfo",
      () => ({
        index: "1",
        id: ownership.schemaId,
        name: "AgentOwnership",
        schemaSignatures: [{ name: "data", type: "bytes" }],
      }),
    ],
    ["fromName", () => ""],
    ["toName", () => ""],
    ["fromDid", () => human1.did],
    ["toDid", () => agent1.did],
    ["fromId", () => human1.iden3Id],
    ["toId", () => agent1.iden3Id],
    ["fromEthereumAddress", () => relay],
    ["toEthereumAddress", () => agent1.address],
    [
      "decodedDataJson",
      () =>
        JSON.stringify([
          {
            name: "data",
            type: "bytes",
            signature: "bytes data",
            value: { name: "data", type: "bytes", value: "0x" },
          },
        ]),
    ],
  ];
  it.each(expected)("%s", (field, value) => {
    expect(item[field]).toEqual(value());
  });
  it("has exactly the list fields: no expirationTime and none of the single-form fields", () => {
    expect(Object.keys(item).sort()).toEqual(expected.map(([f]) => f).sort());
  });
  it("fromId/toId are decimal strings too large for a JavaScript number", () => {
    expect(typeof item.fromId).toBe("string");
    expect(BigInt(item.fromId) > BigInt(Number.MAX_SAFE_INTEGER)).toBe(true);
  });
});

describe("GET /attestations/{id}: single form", () => {
  const cases: Array<[string, () => string, Record<string, unknown>]> = [
    [
      "an active ownership attestation",
      () => own1.attestationId,
      {
        txid: own1.txHash,
        expirationTime: 0,
        revocable: false,
        revoked: false,
        revocationTime: 0,
        rawData: own1.data,
        fromDid: human1.did,
      },
    ],
    [
      "a revoked one, still returned",
      () => revokedPairing.attestationId,
      { revoked: true, revocationTime: 1_765_000_000, revocable: true, toDid: agent4.did },
    ],
    [
      "an expired review, decoded from its schema",
      () => expiredReview.attestationId.toUpperCase().replace("0X", "0x"),
      {
        expirationTime: 1_700_000_000,
        revoked: false,
        rawData: reviewData,
        schemaInfo: {
          index: "2",
          id: review.schemaId,
          name: "Review",
          schemaSignatures: [
            { name: "stars", type: "uint8" },
            { name: "comment", type: "string" },
          ],
        },
      },
    ],
  ];
  it.each(cases)("%s", async (_name, id, fields) => {
    const { status, body } = await getJson(h.app, api(`/attestations/${id()}`));
    expect(status).toBe(200);
    expect(body).toMatchObject(fields);
    expect(Object.keys(body)).toEqual(
      expect.arrayContaining([
        "txid",
        "expirationTime",
        "revocable",
        "revoked",
        "revocationTime",
        "rawData",
        "decodedDataJson",
      ]),
    );
  });
  it("decodedDataJson of a Review reads stars and comment by value.name, every value a string", async () => {
    const { body } = await getJson(h.app, api(`/attestations/${expiredReview.attestationId}`));
    const decoded = JSON.parse(body.decodedDataJson) as Array<{
      name: string;
      type: string;
      signature: string;
      value: { name: string; type: string; value: unknown };
    }>;
    expect(decoded).toEqual([
      {
        name: "stars",
        type: "uint8",
        signature: "uint8 stars",
        value: { name: "stars", type: "uint8", value: "5" },
      },
      {
        name: "comment",
        type: "string",
        signature: "string comment",
        value: { name: "comment", type: "string", value: "works as advertised" },
      },
    ]);
  });
});

describe("GET /attestations: filters (combinable; revoked left out, expired kept)", () => {
  const cases: Array<[string, () => string, () => string[], number]> = [
    ["no filter", () => "", () => [own1, own2, own3, expiredReview].map((a) => a.attestationId), 2],
    [
      "schemaId",
      () => `schemaId=${ownership.schemaId}`,
      () => [own1, own2, own3].map((a) => a.attestationId),
      2,
    ],
    [
      "schemaId in upper-case hex",
      () => `schemaId=0x${review.schemaId.slice(2).toUpperCase()}`,
      () => [expiredReview.attestationId],
      1,
    ],
    [
      "ownership lookup by recipientDid",
      () => `schemaId=${ownership.schemaId}&recipientDid=${agent2.did}`,
      () => [own2.attestationId],
      1,
    ],
    [
      "ownership lookup by recipientEthereumAddress (lower case)",
      () => `schemaId=${ownership.schemaId}&recipientEthereumAddress=${agent3.address.toLowerCase()}`,
      () => [own3.attestationId],
      1,
    ],
    [
      "recipientIden3Id",
      () => `recipientIden3Id=${agent1.iden3Id}`,
      () => [own1.attestationId, expiredReview.attestationId],
      2,
    ],
    ["attesterDid", () => `attesterDid=${human1.did}`, () => [own1.attestationId, own2.attestationId], 1],
    [
      "attesterIden3Id",
      () => `attesterIden3Id=${human2.iden3Id}`,
      () => [own3.attestationId, expiredReview.attestationId],
      1,
    ],
    [
      "attesterEthereumAddress (the relay)",
      () => `attesterEthereumAddress=${relay}`,
      () => [own1.attestationId, own2.attestationId],
      1,
    ],
    [
      "attester and recipient combined",
      () => `attesterDid=${human2.did}&recipientDid=${agent1.did}`,
      () => [expiredReview.attestationId],
      1,
    ],
    [
      "a revoked pairing looks like never paired",
      () => `schemaId=${ownership.schemaId}&recipientDid=${agent4.did}`,
      () => [],
      0,
    ],
    [
      "a DID never paired",
      () => `recipientDid=did:iden3:billions:main:2VmAkNeverPairedNeverPairedNeverPaired`,
      () => [],
      0,
    ],
    ["filters that contradict", () => `schemaId=${review.schemaId}&recipientDid=${agent2.did}`, () => [], 0],
  ];
  it.each(cases)("%s", async (_name, query, expectedIds, uniqueAttesters) => {
    const { status, body } = await getJson(h.app, api(`/attestations?${query()}`));
    expect(status).toBe(200);
    expect(ids(body)).toEqual(expectedIds());
    expect(body.totalItems).toBe(expectedIds().length);
    expect(body.uniqueItems).toBe(uniqueAttesters);
  });
});

describe("paginated envelope", () => {
  // Four listed attestations in all.
  const cases: Array<[string, string, Record<string, unknown>, number]> = [
    [
      "defaults: page 1 of size 10",
      "",
      { totalItems: 4, totalPages: 1, pageNumber: 1, pageSize: 10, nextPage: null },
      4,
    ],
    [
      "first of two pages",
      "page_size=3",
      { totalItems: 4, totalPages: 2, pageNumber: 1, pageSize: 3, nextPage: 2 },
      3,
    ],
    [
      "last page",
      "page_size=3&page_number=2",
      { totalPages: 2, pageNumber: 2, pageSize: 3, nextPage: null },
      1,
    ],
    [
      "past the end",
      "page_size=3&page_number=7",
      { totalItems: 4, totalPages: 2, pageNumber: 7, nextPage: null },
      0,
    ],
    ["maximum page size", "page_size=100", { pageSize: 100, nextPage: null }, 4],
    ["page of one", "page_size=1&page_number=2", { totalPages: 4, pageNumber: 2, nextPage: 3 }, 1],
  ];
  it.each(cases)("%s", async (_name, query, envelope, count) => {
    const { status, body } = await getJson(h.app, api(`/attestations?${query}`));
    expect(status).toBe(200);
    expect(body).toMatchObject({ uniqueItems: 2, ...envelope });
    expect(body.data).toHaveLength(count);
    expect(Object.keys(body).sort()).toEqual([
      "data",
      "nextPage",
      "pageNumber",
      "pageSize",
      "totalItems",
      "totalPages",
      "uniqueItems",
    ]);
  });
  it("pages list the items oldest first and do not overlap", async () => {
    const all = ids((await getJson(h.app, api("/attestations"))).body);
    const paged = [];
    for (let n = 1; n <= 4; n++)
      paged.push(...ids((await getJson(h.app, api(`/attestations?page_size=1&page_number=${n}`))).body));
    expect(paged).toEqual(all);
    expect(all).toEqual([own1, own2, own3, expiredReview].map((a) => a.attestationId));
  });
});

describe("GET /identities/{identity}/attestations", () => {
  const cases: Array<[string, () => string, () => string, () => string[]]> = [
    [
      "a human DID finds all that person's agents",
      () => human1.did,
      () => human1.did,
      () => [own1.attestationId, own2.attestationId],
    ],
    [
      "an agent DID finds its human (and other attestations to it)",
      () => agent1.did,
      () => agent1.did,
      () => [own1.attestationId, expiredReview.attestationId],
    ],
    [
      "an Ethereum address, either side",
      () => relay.toLowerCase(),
      () => relay,
      () => [own1.attestationId, own2.attestationId],
    ],
    ["a recipient address", () => agent3.address, () => agent3.address, () => [own3.attestationId]],
    [
      "an iden3 ID",
      () => human2.iden3Id,
      () => human2.iden3Id,
      () => [own3.attestationId, expiredReview.attestationId],
    ],
    [
      "an iden3 ID with leading zeros",
      () => `00${agent2.iden3Id}`,
      () => agent2.iden3Id,
      () => [own2.attestationId],
    ],
    ["an identity with nothing (revoked only)", () => agent4.did, () => agent4.did, () => []],
  ];
  it.each(cases)("%s", async (_name, identity, canonical, expected) => {
    const { status, body } = await getJson(
      h.app,
      api(`/identities/${encodeURIComponent(identity())}/attestations`),
    );
    expect(status).toBe(200);
    expect(body.identity).toBe(canonical());
    expect(ids(body)).toEqual(expected());
    expect(body).toMatchObject({
      totalItems: expected().length,
      pageNumber: 1,
      pageSize: 10,
      nextPage: null,
    });
  });
  it("pages with page_number and page_size", async () => {
    const { body } = await getJson(h.app, api(`/identities/${human2.did}/attestations?page_size=1`));
    expect(body).toMatchObject({ totalItems: 2, totalPages: 2, nextPage: 2, uniqueItems: 1 });
    expect(ids(body)).toEqual([own3.attestationId]);
  });
});

describe("GET /nullifier", () => {
  const cases: Array<[string, () => string, number, () => unknown]> = [
    ["a verified user", () => `userId=${USER_ID}`, 200, () => ({ userId: USER_ID, nullifier: NULLIFIER })],
    ["without userId", () => "", 400, () => ({ message: "userId query parameter is required" })],
    ["with an empty userId", () => "userId=", 400, () => ({ message: "userId query parameter is required" })],
    [
      "with a non-integer userId",
      () => "userId=abc",
      400,
      () => ({ message: "userId must be a valid integer" }),
    ],
    [
      "with a fractional userId",
      () => "userId=1.5",
      400,
      () => ({ message: "userId must be a valid integer" }),
    ],
    ["with a hex userId", () => "userId=0x1f", 400, () => ({ message: "userId must be a valid integer" })],
    ["with an unknown userId", () => "userId=42", 404, () => ({ message: "Nullifier not found" })],
  ];
  it.each(cases)("%s", async (_name, query, status, body) => {
    const res = await getJson(h.app, api(`/nullifier?${query()}`));
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject(body() as object);
    if (status === 200) expect(Object.keys(res.body).sort()).toEqual(["nullifier", "userId"]);
  });
});

describe("GET /schemas and /schemas/{id}", () => {
  it("lists schemas in registration order with index as a string", async () => {
    const { status, body } = await getJson(h.app, api("/schemas"));
    expect(status).toBe(200);
    expect(body).toMatchObject({
      totalItems: 3,
      uniqueItems: 3,
      totalPages: 1,
      pageNumber: 1,
      pageSize: 10,
      nextPage: null,
    });
    expect(body.data).toEqual([
      {
        index: "1",
        id: ownership.schemaId,
        name: "AgentOwnership",
        resolver: ownership.resolver,
        attestationsCount: 3,
        schemaSignatures: [{ name: "data", type: "bytes" }],
      },
      {
        index: "2",
        id: review.schemaId,
        name: "Review",
        resolver: "0x00000000000000000000000000000000000000AA",
        attestationsCount: 1,
        schemaSignatures: [
          { name: "stars", type: "uint8" },
          { name: "comment", type: "string" },
        ],
      },
      {
        index: "3",
        id: legacy.schemaId,
        name: "",
        resolver: legacy.resolver,
        attestationsCount: 0,
        schemaSignatures: [{ name: "note", type: "string" }],
      },
    ]);
  });
  it("pages schemas with page_size", async () => {
    const { body } = await getJson(h.app, api("/schemas?page_size=2&page_number=2"));
    expect(body).toMatchObject({ totalPages: 2, pageNumber: 2, nextPage: null });
    expect(body.data.map((s: { index: string }) => s.index)).toEqual(["3"]);
  });
  const single: Array<[string, () => string, () => Record<string, unknown>]> = [
    [
      "a schema registered with a userId: creator identity from that iden3 ID",
      () => review.schemaId,
      () => ({
        index: "2",
        name: "Review",
        creator: review.registerer,
        creatorDid: human2.did,
        creatorId: human2.iden3Id,
        txid: review.txHash,
        revocable: true,
        schemaRaw: "uint8 stars,string comment",
        attestationsCount: 1,
      }),
    ],
    [
      "a schema registered without one: creator identity derived from its address",
      () => ownership.schemaId,
      () => ({
        index: "1",
        creator: ownership.registerer,
        creatorDid: party(ownership.registerer as `0x${string}`).did,
        revocable: false,
        schemaRaw: "bytes data",
      }),
    ],
  ];
  it.each(single)("%s", async (_name, id, fields) => {
    const { status, body } = await getJson(h.app, api(`/schemas/${id()}`));
    expect(status).toBe(200);
    expect(body).toMatchObject(fields());
  });
  it("the single form carries a page of the schema's attestations", async () => {
    const { body } = await getJson(h.app, api(`/schemas/${ownership.schemaId}?page_size=2`));
    expect(body.attestations).toMatchObject({ totalItems: 3, totalPages: 2, nextPage: 2, pageSize: 2 });
    expect(ids(body.attestations)).toEqual([own1.attestationId, own2.attestationId]);
  });
});

describe("GET /search/{query}", () => {
  const cases: Array<[string, () => string, () => unknown[]]> = [
    [
      "a schema id",
      () => review.schemaId,
      () => [
        {
          type: "schema",
          id: review.schemaId,
          schemaInfo: {
            name: "Review",
            schemaSignatures: [
              { name: "stars", type: "uint8" },
              { name: "comment", type: "string" },
            ],
          },
        },
      ],
    ],
    [
      "a schema name, any case",
      () => "agentownership",
      () => [
        {
          type: "schema",
          id: ownership.schemaId,
          schemaInfo: { name: "AgentOwnership", schemaSignatures: [{ name: "data", type: "bytes" }] },
        },
      ],
    ],
    [
      "an attestation id",
      () => own2.attestationId,
      () => [
        {
          type: "attestation",
          id: own2.attestationId,
          schemaId: ownership.schemaId,
          fromDid: human1.did,
          toDid: agent2.did,
          revoked: false,
        },
      ],
    ],
    ["a human DID: the attester side", () => human1.did, () => [{ type: "did", attesterDid: human1.did }]],
    ["an agent DID: the recipient side", () => agent1.did, () => [{ type: "did", recipientDid: agent1.did }]],
    ["a DID on both sides", () => human2.did, () => [{ type: "did", attesterDid: human2.did }]],
    [
      "an address",
      () => agent3.address.toLowerCase(),
      () => [{ type: "address", recipientEthereumAddress: agent3.address }],
    ],
    ["an iden3 ID", () => human2.iden3Id, () => [{ type: "iden3Id", attesterIden3Id: human2.iden3Id }]],
    ["nothing", () => "no-such-thing", () => []],
    ["a query holding NUL", () => "Agent\u0000Ownership", () => []],
    ["an unknown 32-byte id", () => randomHex32(), () => []],
  ];
  it.each(cases)("%s", async (_name, query, expected) => {
    const { status, body } = await getJson(h.app, api(`/search/${encodeURIComponent(query())}`));
    expect(status).toBe(200);
    expect(body).toEqual(expected());
  });
});

describe("errors", () => {
  const cases: Array<[string, () => string, number, Record<string, unknown>]> = [
    [
      "unknown attestation id",
      () => `/attestations/${randomHex32()}`,
      404,
      { message: "Attestation not found" },
    ],
    ["malformed attestation id", () => "/attestations/0x1234", 400, { error: "invalid_request" }],
    ["unknown schema", () => `/schemas/${randomHex32()}`, 404, { message: "Schema not found" }],
    ["malformed schema id", () => "/schemas/AgentOwnership", 400, { error: "invalid_request" }],
    [
      "page_size over the maximum",
      () => "/attestations?page_size=101",
      400,
      { message: "querystring/page_size must be <= 100" },
    ],
    ["page_size zero", () => "/attestations?page_size=0", 400, { error: "invalid_request" }],
    ["page_number zero", () => "/attestations?page_number=0", 400, { error: "invalid_request" }],
    ["page_number not a number", () => "/attestations?page_number=two", 400, { error: "invalid_request" }],
    ["page_size fractional", () => "/schemas?page_size=1.5", 400, { error: "invalid_request" }],
    ["schemaId not 32-byte hex", () => "/attestations?schemaId=0xabc", 400, { error: "invalid_request" }],
    [
      "recipientEthereumAddress not an address",
      () => "/attestations?recipientEthereumAddress=agent",
      400,
      { error: "invalid_request" },
    ],
    ["recipientDid not a DID", () => "/attestations?recipientDid=agent", 400, { error: "invalid_request" }],
    [
      "attesterIden3Id not decimal",
      () => "/attestations?attesterIden3Id=-1",
      400,
      { error: "invalid_request" },
    ],
    [
      "a repeated filter",
      () => `/attestations?schemaId=${randomHex32()}&schemaId=${randomHex32()}`,
      400,
      { error: "invalid_request" },
    ],
    [
      "identity of no known format",
      () => "/identities/alice/attestations",
      400,
      { error: "invalid_identity" },
    ],
    [
      "page_number Infinity (ajv coerces it to a number)",
      () => "/attestations?page_number=Infinity",
      400,
      { error: "invalid_request" },
    ],
    [
      "page_size 1e400",
      () => "/identities/0x0000000000000000000000000000000000000001/attestations?page_size=1e400",
      400,
      { error: "invalid_request" },
    ],
    [
      "a DID filter holding NUL",
      () => "/attestations?recipientDid=did:iden3:x%00",
      400,
      { error: "invalid_request" },
    ],
    [
      "a DID identity holding NUL",
      () => "/identities/did:iden3:x%00/attestations",
      400,
      { error: "invalid_identity" },
    ],
    ["unknown path", () => "/nope", 404, { error: "not_found" }],
    ["unknown path outside the API", () => "/api/v2/attestations", 404, { error: "not_found" }],
  ];
  it.each(cases)("%s → %i", async (_name, path, status, body) => {
    const url = path().startsWith("/api/") ? path() : api(path());
    const res = await getJson(h.app, url);
    expect(res.status).toBe(status);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    expect(res.body).toMatchObject(body);
    expect(typeof res.body.message).toBe("string");
  });
});

describe("health, CORS, OpenAPI", () => {
  it("/healthCheck answers the text Ok", async () => {
    const res = await h.app.inject({ method: "GET", url: api("/healthCheck") });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe("Ok");
    expect(res.headers["content-type"]).toMatch(/^text\/plain/);
  });
  it("allows the configured origin only", async () => {
    const allowed = await getJson(h.app, api("/schemas"), { origin: "https://app.example" });
    expect(allowed.headers["access-control-allow-origin"]).toBe("https://app.example");
    const other = await getJson(h.app, api("/schemas"), { origin: "https://evil.example" });
    expect(other.headers["access-control-allow-origin"]).toBeUndefined();
  });
  it("serves OpenAPI at /docs documenting every endpoint and the paging choices", async () => {
    const { status, body } = await getJson(h.app, "/docs/json");
    expect(status).toBe(200);
    expect(Object.keys(body.paths).sort()).toEqual(
      [
        "/api/v1/attestations",
        "/api/v1/attestations/{id}",
        "/api/v1/healthCheck",
        "/api/v1/identities/{identity}/attestations",
        "/api/v1/nullifier",
        "/api/v1/schemas",
        "/api/v1/schemas/{id}",
        "/api/v1/search/{query}",
      ].sort(),
    );
    expect(body.info.description).toContain("`page_size` defaults to 10, maximum 100");
    expect(body.info.description).toContain("oldest first by chain position");
    const pageSize = body.paths["/api/v1/attestations"].get.parameters.find(
      (p: { name: string }) => p.name === "page_size",
    );
    expect(pageSize.schema).toMatchObject({ default: 10, maximum: 100, minimum: 1 });
    expect(Object.keys(body.paths["/api/v1/attestations"].get.responses).sort()).toEqual([
      "200",
      "400",
      "429",
    ]);
    expect(Object.keys(body.paths["/api/v1/attestations/{id}"].get.responses).sort()).toEqual([
      "200",
      "400",
      "404",
      "429",
    ]);
  });
});

describe("concurrent requests (answered in shared statements)", () => {
  it("each gets its own answer, whatever else is asked at the same time", async () => {
    const paths = [
      ...[agent1, agent2, agent3, agent4].map(
        (a) => `/attestations?schemaId=${ownership.schemaId}&recipientEthereumAddress=${a.address}`,
      ),
      ...[agent1, agent2, agent3, agent4].map(
        (a) => `/attestations?schemaId=${ownership.schemaId}&recipientDid=${a.did}`,
      ),
      ...[1, 2, 3, 4, 5].map((n) => `/attestations?page_size=1&page_number=${n}`),
      ...[1, 2].map((n) => `/attestations?page_size=3&page_number=${n}`),
      `/attestations?attesterDid=${human2.did}&recipientDid=${agent1.did}`,
      ...[human1, human2, agent1].map((p) => `/identities/${p.did}/attestations`),
      `/schemas/${ownership.schemaId}?page_size=2&page_number=2`,
    ];
    const sequential = [];
    for (const path of paths) sequential.push(await getJson(h.app, api(path)));
    const concurrent = await Promise.all([...paths, ...paths].map((path) => getJson(h.app, api(path))));
    expect(concurrent.map((r) => r.body)).toEqual([...sequential, ...sequential].map((r) => r.body));
  });
});

describe("rate limiting", () => {
  it("answers 429 with Retry-After past the limit, per client, and never limits /healthCheck", async () => {
    const app = await buildApp({
      pool: h.pool,
      logger,
      rateLimit: { max: 3, timeWindowMs: 60_000 },
    });
    try {
      const from = (ip: string) => ({ method: "GET" as const, url: api("/schemas"), remoteAddress: ip });
      for (let i = 0; i < 3; i++) expect((await app.inject(from("10.0.0.1"))).statusCode).toBe(200);
      const limited = await app.inject(from("10.0.0.1"));
      expect(limited.statusCode).toBe(429);
      expect(Number(limited.headers["retry-after"])).toBeGreaterThan(0);
      expect(limited.json()).toMatchObject({ error: "rate_limited" });
      expect((await app.inject(from("10.0.0.2"))).statusCode).toBe(200);
      for (let i = 0; i < 5; i++) {
        const health = await app.inject({
          method: "GET",
          url: api("/healthCheck"),
          remoteAddress: "10.0.0.1",
        });
        expect(health.statusCode).toBe(200);
      }
    } finally {
      await app.close();
    }
  });
});
