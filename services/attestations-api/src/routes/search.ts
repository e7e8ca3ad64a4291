import type { HttpApp } from "@humanpass/http";
import { Type } from "@sinclair/typebox";
import { findAttestation, findSchema, findSchemasByName, identitySides } from "../db/queries.ts";
import type { SchemaRow } from "../db/types.ts";
import { schemaFields } from "../decode.ts";
import type { RouteDeps } from "./context.ts";
import { resolveIdentity } from "./identities.ts";
import { ErrorBody, SearchResults } from "./shapes.ts";

const MAX_NAME_MATCHES = 20;
const HEX32 = /^0x[0-9a-fA-F]{64}$/;

function schemaResult(row: SchemaRow) {
  return {
    type: "schema" as const,
    id: row.id,
    schemaInfo: { name: row.name, schemaSignatures: schemaFields(row.schema_raw) },
  };
}

export async function searchRoutes(app: HttpApp, reader: RouteDeps): Promise<void> {
  app.get(
    "/search/:query",
    {
      schema: {
        summary: "Search",
        description:
          "An array of matches (empty when nothing matches), each with `type`: `schema` (`id`, `schemaInfo`) for a schema id or name " +
          "(case-insensitive); `attestation` (`id`, `schemaId`, `fromDid`, `toDid`, `revoked`) for an attestation id; `did`, `address` or " +
          "`iden3Id` carrying `attesterDid`/`recipientDid` (or the address / iden3 ID fields) for the side of a listed attestation on which the identity appears.",
        tags: ["search"],
        params: Type.Object({ query: Type.String() }),
        response: { 200: SearchResults, 400: ErrorBody, 429: ErrorBody },
      },
    },
    async (request) => {
      const query = request.params.query.trim();
      // Postgres text cannot hold NUL, so nothing stored can match a query containing one.
      if (query.includes("\u0000")) return [];
      if (HEX32.test(query)) {
        const id = query.toLowerCase();
        const [schema, attestation] = await Promise.all([
          findSchema(reader, id),
          findAttestation(reader, id),
        ]);
        return [
          ...(schema ? [schemaResult(schema)] : []),
          ...(attestation
            ? [
                {
                  type: "attestation" as const,
                  id: attestation.id,
                  schemaId: attestation.schema_id,
                  fromDid: attestation.attester_did,
                  toDid: attestation.recipient_did,
                  revoked: attestation.revoked,
                },
              ]
            : []),
        ];
      }
      const identity = resolveIdentity(query);
      if (identity) {
        const sides = await identitySides(reader, identity, identity.match);
        const field = { did: "Did", address: "EthereumAddress", iden3Id: "Iden3Id" }[identity.kind];
        const type = identity.kind;
        return [
          ...(sides.attester ? [{ type, [`attester${field}`]: identity.value }] : []),
          ...(sides.recipient ? [{ type, [`recipient${field}`]: identity.value }] : []),
        ];
      }
      return (await findSchemasByName(reader, query, MAX_NAME_MATCHES)).map(schemaResult);
    },
  );
}
