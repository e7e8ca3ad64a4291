import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { AttestationsApiError } from "./errors.ts";

// Spec 2: iden3 IDs and nullifiers are decimal-integer strings (too large for a JavaScript number), and
// `/nullifier` takes the ownership record's `fromId` as its decimal `userId`.
const Decimal = Type.String({ pattern: "^[0-9]+$" });

/** The fields of a spec-2 attestation list item that a human lookup reads; other fields are allowed. */
export const OwnershipRecord = Type.Object({
  id: Type.String(),
  creationTime: Type.Integer(),
  fromId: Decimal,
  fromDid: Type.String(),
  toDid: Type.String(),
  fromEthereumAddress: Type.String(),
  toEthereumAddress: Type.String(),
});
export type OwnershipRecord = Static<typeof OwnershipRecord>;

/** The paginated envelope of spec 2, as far as the client reads it. */
export const Envelope = Type.Object({
  data: Type.Array(Type.Unknown()),
  nextPage: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
});

/** `GET /nullifier`; a null nullifier means, like the endpoint's own 404, that none is known. */
export const NullifierAnswer = Type.Object({ nullifier: Type.Union([Decimal, Type.Null()]) });

function parser<T extends TSchema>(schema: T, what: string): (value: unknown) => Static<T> {
  const check = TypeCompiler.Compile(schema);
  return (value) => {
    if (check.Check(value)) return value;
    const first = check.Errors(value).First();
    throw new AttestationsApiError(
      `attestations API sent ${what}: ${first ? `${first.path || "/"} ${first.message}` : "unreadable"}`,
    );
  };
}

/** The record, or AttestationsApiError: a record we cannot read means "cannot tell", never "not registered". */
export const parseOwnershipRecord = parser(OwnershipRecord, "a malformed attestation");
export const parseEnvelope = parser(Envelope, "no data array");
export const parseNullifierAnswer = parser(NullifierAnswer, "no nullifier");
