import { type HttpApp, HttpError } from "@humanpass/http";
import { Type } from "@sinclair/typebox";
import { findSchema, pageOfAttestations, pageOfSchemas } from "../db/queries.ts";
import { attestationItem, envelope, schemaItem, schemaSingle } from "../present.ts";
import type { RouteDeps } from "./context.ts";
import {
  Envelope,
  ErrorBody,
  Hex32,
  PagingOnlyQuery,
  pageRequest,
  SchemaListItem,
  SchemaSingle,
} from "./shapes.ts";

export async function schemaRoutes(app: HttpApp, reader: RouteDeps): Promise<void> {
  app.get(
    "/schemas",
    {
      schema: {
        summary: "List schemas",
        description:
          "Schemas in registration (chain) order; `index` is that order as a string, 1 for the first. `uniqueItems` equals `totalItems`.",
        tags: ["schemas"],
        querystring: PagingOnlyQuery,
        response: { 200: Envelope(SchemaListItem), 400: ErrorBody, 429: ErrorBody },
      },
    },
    async (request) => {
      const page = pageRequest(request.query);
      return envelope(await pageOfSchemas(reader, page), page, schemaItem);
    },
  );

  app.get(
    "/schemas/:id",
    {
      schema: {
        summary: "One schema",
        description:
          "The single form: the list fields plus creator, creatorDid, creatorId, txid, revocable, schemaRaw and `attestations`, " +
          "a page of the listed attestations written against the schema (paged by `page_number` and `page_size`). 404 `Schema not found`.",
        tags: ["schemas"],
        params: Type.Object({ id: Hex32 }),
        querystring: PagingOnlyQuery,
        response: { 200: SchemaSingle, 400: ErrorBody, 429: ErrorBody, 404: ErrorBody },
      },
    },
    async (request) => {
      const id = request.params.id.toLowerCase();
      const row = await findSchema(reader, id);
      if (!row) throw new HttpError(404, "not_found", "Schema not found");
      const page = pageRequest(request.query);
      const attestations = await pageOfAttestations(
        reader,
        { match: "all", conditions: [{ column: "schema_id", value: id }] },
        page,
      );
      return schemaSingle(row, envelope(attestations, page, attestationItem));
    },
  );
}
