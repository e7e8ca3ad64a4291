import { type HttpApp, HttpError } from "@humanpass/http";
import { Type } from "@sinclair/typebox";
import { getAddress } from "viem";
import { type AttestationFilter, findAttestation, pageOfAttestations } from "../db/queries";
import { attestationItem, attestationSingle, envelope } from "../present";
import type { RouteDeps } from "./context";
import {
  AttestationEnvelope,
  AttestationFiltersQuery,
  AttestationSingle,
  ErrorBody,
  Hex32,
  pageRequest,
} from "./shapes";

type Filters = typeof AttestationFiltersQuery.static;

/** Every given filter must hold; values are brought to the stored form (lower-case hex, checksummed address, canonical decimal). */
function filterOf(q: Filters): AttestationFilter {
  return (eb) => {
    const all = [];
    if (q.schemaId) all.push(eb("a.schema_id", "=", q.schemaId.toLowerCase()));
    if (q.attesterDid) all.push(eb("a.attester_did", "=", q.attesterDid));
    if (q.attesterIden3Id) all.push(eb("a.attester_iden3_id", "=", BigInt(q.attesterIden3Id).toString()));
    if (q.attesterEthereumAddress)
      all.push(eb("a.attester_address", "=", getAddress(q.attesterEthereumAddress.toLowerCase())));
    if (q.recipientDid) all.push(eb("a.recipient_did", "=", q.recipientDid));
    if (q.recipientIden3Id) all.push(eb("a.recipient_iden3_id", "=", BigInt(q.recipientIden3Id).toString()));
    if (q.recipientEthereumAddress)
      all.push(eb("a.recipient_address", "=", getAddress(q.recipientEthereumAddress.toLowerCase())));
    return eb.and(all);
  };
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
        response: { 200: AttestationEnvelope, 400: ErrorBody },
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
        response: { 200: AttestationSingle, 400: ErrorBody, 404: ErrorBody },
      },
    },
    async (request) => {
      const row = await findAttestation(reader, request.params.id.toLowerCase());
      if (!row) throw new HttpError(404, "not_found", "Attestation not found");
      return attestationSingle(row);
    },
  );
}
