import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  attestationRecorded,
  type Harness,
  party,
  schemaRegistered,
  startHarness,
  uniquenessVerified,
} from "./support/harness.ts";

/** Whatever a client sends in a query value or a path segment, the answer is never a server error. */
let h: Harness;
const human = party();
const agent = party();
const schema = schemaRegistered();
const RUNS = 60;

beforeAll(async () => {
  h = await startHarness("att_properties");
  await h.publish("CHAIN", "schema_registered", schema);
  for (let i = 0; i < 3; i++)
    await h.publish("CHAIN", "attestation_recorded", attestationRecorded(schema.schemaId, human, agent));
  await h.publish("VERIFIER", "uniqueness_verified", uniquenessVerified(human.iden3Id, "5"));
});
afterAll(async () => {
  await h?.close();
});

/** Characters that break naive handling: NUL (Postgres text cannot hold it), controls, URL delimiters. */
const awkward = fc.constantFrom(
  "\u0000",
  "\u0001",
  "\n",
  "\t",
  "\u202e",
  "\ufffd",
  "%",
  "/",
  "?",
  "#",
  "&",
  "=",
  "\\",
  "'",
  '"',
);
/** Valid-looking prefixes followed by awkward characters. */
const noisy = fc
  .tuple(
    fc.constantFrom(
      "",
      "did:iden3:",
      "did:iden3:billions:main:",
      "0x",
      human.did,
      schema.schemaId,
      human.iden3Id,
      "AgentOwnership",
    ),
    fc.array(fc.oneof(awkward, fc.string({ unit: "binary", maxLength: 4 })), { minLength: 1, maxLength: 4 }),
  )
  .map(([prefix, parts]) => prefix + parts.join(""));

/** Values shaped like the valid ones, near their limits, and plain garbage. */
const value = fc.oneof(
  noisy,
  noisy,
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.bigInt({ min: -(2n ** 300n), max: 2n ** 300n }).map(String),
  fc.integer().map(String),
  fc.double().map(String),
  fc.stringMatching(/^0x[0-9a-fA-F]{0,70}$/),
  fc.stringMatching(/^did:[a-z0-9]{1,8}:\S{0,60}$/),
  fc.stringMatching(/^[0-9]{70,90}$/),
  fc.constantFrom(
    human.did,
    agent.address,
    human.iden3Id,
    schema.schemaId,
    "100",
    "101",
    "1000000000",
    "1000000001",
  ),
  fc.constantFrom(
    "",
    " ",
    "0",
    "-0",
    "-1",
    "1e3",
    "0x",
    "NaN",
    "Infinity",
    "null",
    "[]",
    "{}",
    "true",
    "' or 1=1 --",
    "\u0000",
    "%",
    "9".repeat(400),
  ),
);

/** Percent-encodes what can be encoded; lone surrogates (which cannot) go through as raw percent escapes. */
function encode(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return Buffer.from(text).toString("hex").replace(/(..)/g, "%$1");
  }
}

async function status(url: string): Promise<{ status: number; body: string; type: string }> {
  const res = await h.app.inject({ method: "GET", url });
  return { status: res.statusCode, body: res.body, type: String(res.headers["content-type"] ?? "") };
}

function assertNotServerError(res: { status: number; body: string; type: string }, url: string) {
  expect(res.status, `${url} → ${res.status} ${res.body.slice(0, 200)}`).toBeLessThan(500);
  if (res.status >= 400) {
    expect(res.type).toMatch(/^application\/json/);
    expect(typeof JSON.parse(res.body).message).toBe("string");
  }
}

const ENDPOINT_PARAMS: Array<[string, string[]]> = [
  [
    "/api/v1/attestations",
    [
      "page_number",
      "page_size",
      "schemaId",
      "attesterDid",
      "attesterIden3Id",
      "attesterEthereumAddress",
      "recipientDid",
      "recipientIden3Id",
      "recipientEthereumAddress",
    ],
  ],
  [`/api/v1/identities/${encode(human.did)}/attestations`, ["page_number", "page_size"]],
  ["/api/v1/schemas", ["page_number", "page_size"]],
  [`/api/v1/schemas/${schema.schemaId}`, ["page_number", "page_size"]],
  ["/api/v1/nullifier", ["userId"]],
];

describe("query parameters", () => {
  for (const [path, params] of ENDPOINT_PARAMS) {
    for (const param of params) {
      it(`${path.replace(/\/identities\/[^/]+/, "/identities/{did}")} ${param}: no response ≥ 500`, async () => {
        await fc.assert(
          fc.asyncProperty(fc.array(value, { minLength: 1, maxLength: 3 }), async (values) => {
            const url = `${path}?${values.map((v) => `${param}=${encode(v)}`).join("&")}`;
            assertNotServerError(await status(url), url);
          }),
          { numRuns: RUNS },
        );
      });
    }
  }

  it("/api/v1/attestations with any combination of parameters: no response ≥ 500", async () => {
    const names = ENDPOINT_PARAMS[0][1];
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.constantFrom(...names, "unknown", "page"), value), { maxLength: 6 }),
        async (pairs) => {
          const url = `/api/v1/attestations?${pairs.map(([k, v]) => `${k}=${encode(v)}`).join("&")}`;
          assertNotServerError(await status(url), url);
        },
      ),
      { numRuns: RUNS * 2 },
    );
  });
});

describe("path segments", () => {
  const templates = [
    (s: string) => `/api/v1/attestations/${s}`,
    (s: string) => `/api/v1/identities/${s}/attestations`,
    (s: string) => `/api/v1/schemas/${s}`,
    (s: string) => `/api/v1/search/${s}`,
    (s: string) => `/api/v1/${s}`,
  ];
  for (const template of templates) {
    const name = template("{segment}");
    it(`${name}: no response ≥ 500, encoded or raw`, async () => {
      await fc.assert(
        fc.asyncProperty(value, fc.boolean(), async (segment, raw) => {
          // Raw keeps characters a careless client sends as they are; only those that would end the path are escaped.
          const text = raw
            ? segment.replace(/[/?#\s]/g, (c) => encode(c)).replace(/[^\x21-\x7e]/g, (c) => encode(c))
            : encode(segment);
          const url = template(text);
          assertNotServerError(await status(url), url);
        }),
        { numRuns: RUNS },
      );
    });
  }
  it("malformed percent escapes are a client error", async () => {
    for (const bad of ["%", "%zz", "%E0%A4%A", "%c0%af", "%ff"]) {
      for (const template of templates) {
        const url = template(bad);
        assertNotServerError(await status(url), url);
      }
    }
  });
});
