import { type HttpApp, HttpError } from "@humanpass/http";
import { Type } from "@sinclair/typebox";
import { findAttestation, pageOfAttestations } from "../db/queries.ts";
import type { AttestationFilter, FilterColumn } from "../db/types.ts";
import { attestationItem, attestationSingle, envelope } from "../present.ts";
import type { RouteDeps } from "./context.ts";
import {
  AttestationEnvelope,
  AttestationFiltersQuery,
  AttestationSingle,
  ErrorBody,
  Hex32,
  pageRequest,
} from "./shapes.ts";

type Filters = typeof AttestationFiltersQuery.static;

const FILTERS: Array<[keyof Filters, FilterColumn, (value: string) => string]> = [
  ["schemaId", "schema_id", (v) => v.toLowerCase()],
  ["attesterDid", "attester_did", (v) => v],
  ["attesterIden3Id", "attester_iden3_id", (v) => BigInt(v).toString()],
  ["attesterEthereumAddress", "attester_address", (v) => v.toLowerCase()],
  ["recipientDid", "recipient_did", (v) => v],
  ["recipientIden3Id", "recipient_iden3_id", (v) => BigInt(v).toString()],
  ["recipientEthereumAddress", "recipient_address", (v) => v.toLowerCase()],
];

/** Every given filter must hold; values are brought to the matched form (lower-case hex, canonical decimal). */
function filterOf(q: Filters): AttestationFilter {
  const conditions = [];
  for (const [param, column, normalize] of FILTERS) {
    const value = q[param];
    if (typeof value === "string") conditions.push({ column, value: normalize(value) });
  }
  return { match: "all", conditions };
}

export async function attestationRoutes(app: HttpApp, reader: RouteDeps): Promise<void> {
  app.get(
    "/attestations",
    {
      schema: {
        summary: "List attestations",
        description:
          "Attestations that are not revoked (expired ones are kept), oldest first by chain position (block, log index). Filters combine with AND. " +
          "`uniqueItems` is the number of distinct attesters. List items carry no `expirationTime`.",
        tags: ["attestations"],
        querystring: AttestationFiltersQuery,
        response: { 200: AttestationEnvelope, 400: ErrorBody, 429: ErrorBody },
      },
    },
    async (request) => {
      const q = request.query;
      const page = pageRequest(q);
      return envelope(await pageOfAttestations(reader, filterOf(q), page), page, attestationItem);
    },
  );

  app.get(
    "/attestations/:id",
    {
      schema: {
        summary: "One attestation",
        description:
          "The single form: revoked attestations are returned too, with `revoked` true and `revocationTime`.",
        tags: ["attestations"],
        params: Type.Object({ id: Hex32 }),
        response: { 200: AttestationSingle, 400: ErrorBody, 429: ErrorBody, 404: ErrorBody },
      },
    },
    async (request) => {
      const row = await findAttestation(reader, request.params.id.toLowerCase());
      if (!row) throw new HttpError(404, "not_found", "Attestation not found");
      return attestationSingle(row);
    },
  );
}
