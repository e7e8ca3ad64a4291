import { ErrorBody, HttpError } from "@humanpass/http";
import { type TSchema, Type } from "@sinclair/typebox";

export { ErrorBody };

export const Hex32 = Type.String({
  pattern: "^0x[0-9a-fA-F]{64}$",
  description: "32-byte hex with 0x prefix",
});
export const EthereumAddress = Type.String({ pattern: "^0x[0-9a-fA-F]{40}$", description: "hex address" });
/** The DID syntax of W3C DID Core: method name, then method-specific id characters (no spaces, controls or NUL). */
export const DID_PATTERN = "^did:[a-z0-9]+:[A-Za-z0-9._:%-]+$";
export const Did = Type.String({
  pattern: DID_PATTERN,
  maxLength: 512,
  description: "a DID, e.g. did:iden3:billions:main:…",
});
export const Iden3Id = Type.String({ pattern: "^[0-9]{1,78}$", description: "iden3 ID as a decimal string" });

export const PAGE_SIZE_DEFAULT = 10;
export const PAGE_SIZE_MAX = 100;
export const PAGE_NUMBER_MAX = 1_000_000_000;

/**
 * Ajv lets `Infinity` (and `1e400`) through an integer schema with a maximum once it has coerced the query string,
 * so the handlers check the range again before a value reaches SQL.
 */
export function pageRequest(query: { page_number: number; page_size: number }): {
  number: number;
  size: number;
} {
  const { page_number: number, page_size: size } = query;
  if (!Number.isSafeInteger(number) || number < 1 || number > PAGE_NUMBER_MAX) {
    throw new HttpError(
      400,
      "invalid_request",
      `querystring/page_number must be an integer from 1 to ${PAGE_NUMBER_MAX}`,
    );
  }
  if (!Number.isSafeInteger(size) || size < 1 || size > PAGE_SIZE_MAX) {
    throw new HttpError(
      400,
      "invalid_request",
      `querystring/page_size must be an integer from 1 to ${PAGE_SIZE_MAX}`,
    );
  }
  return { number, size };
}

/**
 * Ajv coerces a query string with JavaScript's Number(), which reads `0x10` as 16, `1e1` as 10 and ` 7` as 7: paging
 * values are checked as written, decimal digits only, before validation coerces them.
 */
export async function decimalPagingOnly(request: { query: unknown }): Promise<void> {
  const query = request.query as Record<string, unknown> | undefined;
  for (const name of ["page_number", "page_size"]) {
    const value = query?.[name];
    if (value !== undefined && (typeof value !== "string" || !/^[0-9]+$/.test(value))) {
      throw new HttpError(400, "invalid_request", `querystring/${name} must be written in decimal digits`);
    }
  }
}

export const PagingQuery = {
  page_number: Type.Integer({
    minimum: 1,
    maximum: PAGE_NUMBER_MAX,
    default: 1,
    description: "1-based page number; default 1",
  }),
  page_size: Type.Integer({
    minimum: 1,
    maximum: PAGE_SIZE_MAX,
    default: PAGE_SIZE_DEFAULT,
    description: `items per page; default ${PAGE_SIZE_DEFAULT}, maximum ${PAGE_SIZE_MAX}`,
  }),
};

export const AttestationFiltersQuery = Type.Object({
  ...PagingQuery,
  schemaId: Type.Optional(Hex32),
  attesterDid: Type.Optional(Did),
  attesterIden3Id: Type.Optional(Iden3Id),
  attesterEthereumAddress: Type.Optional(EthereumAddress),
  recipientDid: Type.Optional(Did),
  recipientIden3Id: Type.Optional(Iden3Id),
  recipientEthereumAddress: Type.Optional(EthereumAddress),
});

export const PagingOnlyQuery = Type.Object(PagingQuery);

export const SchemaSignature = Type.Object({ name: Type.String(), type: Type.String() });

export const SchemaInfo = Type.Object({
  index: Type.String({
    description:
      "position in registration (chain) order, 1 for the first; empty when the schema is not indexed",
  }),
  id: Type.String(),
  name: Type.String(),
  schemaSignatures: Type.Array(SchemaSignature),
});

export const AttestationListItem = Type.Object({
  id: Type.String(),
  creationTime: Type.Integer({ description: "Unix seconds" }),
  schemaInfo: SchemaInfo,
  fromName: Type.String({ description: "registered name of the attester; empty when unknown" }),
  toName: Type.String({ description: "registered name of the recipient; empty when unknown" }),
  fromDid: Type.String(),
  toDid: Type.String(),
  fromId: Type.String({ description: "iden3 ID, decimal" }),
  toId: Type.String({ description: "iden3 ID, decimal" }),
  fromEthereumAddress: Type.String(),
  toEthereumAddress: Type.String(),
  decodedDataJson: Type.String({
    description:
      "JSON array of { name, type, signature, value: { name, type, value } }, every value a string",
  }),
});

export const AttestationSingle = Type.Object({
  ...AttestationListItem.properties,
  txid: Type.String(),
  expirationTime: Type.Integer({ description: "Unix seconds; 0 means never" }),
  revocable: Type.Boolean(),
  revoked: Type.Boolean(),
  revocationTime: Type.Integer({ description: "Unix seconds; 0 when not revoked" }),
  rawData: Type.String({ description: "ABI-encoded data before decoding" }),
});

export function Envelope<T extends TSchema>(item: T, extra: Record<string, TSchema> = {}) {
  return Type.Object({
    totalItems: Type.Integer(),
    uniqueItems: Type.Integer(),
    totalPages: Type.Integer(),
    pageNumber: Type.Integer(),
    pageSize: Type.Integer(),
    nextPage: Type.Union([Type.Integer(), Type.Null()], { description: "null on the last page" }),
    ...extra,
    data: Type.Array(item),
  });
}

export const AttestationEnvelope = Envelope(AttestationListItem);

export const SchemaListItem = Type.Object({
  index: Type.String(),
  id: Type.String(),
  name: Type.String(),
  resolver: Type.String(),
  attestationsCount: Type.Integer({ description: "attestations listed (not revoked) under this schema" }),
  schemaSignatures: Type.Array(SchemaSignature),
});

export const SchemaSingle = Type.Object({
  ...SchemaListItem.properties,
  creator: Type.String(),
  creatorDid: Type.String(),
  creatorId: Type.String(),
  txid: Type.String(),
  revocable: Type.Boolean(),
  schemaRaw: Type.String({ description: "`<type> <name>,<type> <name>`" }),
  attestations: AttestationEnvelope,
});

export const Nullifier = Type.Object({ userId: Type.String(), nullifier: Type.String() });

export const SearchResult = Type.Object(
  {
    type: Type.Union(
      ["schema", "attestation", "did", "address", "iden3Id"].map((t) => Type.Literal(t)),
      { description: "what matched" },
    ),
    id: Type.Optional(Type.String()),
    schemaInfo: Type.Optional(
      Type.Object({ name: Type.String(), schemaSignatures: Type.Array(SchemaSignature) }),
    ),
    schemaId: Type.Optional(Type.String()),
    fromDid: Type.Optional(Type.String()),
    toDid: Type.Optional(Type.String()),
    revoked: Type.Optional(Type.Boolean()),
    attesterDid: Type.Optional(Type.String()),
    recipientDid: Type.Optional(Type.String()),
    attesterEthereumAddress: Type.Optional(Type.String()),
    recipientEthereumAddress: Type.Optional(Type.String()),
    attesterIden3Id: Type.Optional(Type.String()),
    recipientIden3Id: Type.Optional(Type.String()),
  },
  {
    description:
      "schema: id, schemaInfo; attestation: id, schemaId, fromDid, toDid, revoked; did/address/iden3Id: the side it appears on",
  },
);

export const SearchResults = Type.Array(SearchResult);
