import { type HttpApp, HttpError } from "@humanpass/http";
import { Type } from "@sinclair/typebox";
import { findNullifier } from "../db/queries.ts";
import type { RouteDeps } from "./context.ts";
import { ErrorBody, Nullifier } from "./shapes.ts";

export async function nullifierRoutes(app: HttpApp, reader: RouteDeps): Promise<void> {
  app.get(
    "/nullifier",
    {
      schema: {
        summary: "The nullifier of a verified person",
        description:
          "`userId` is the person's iden3 ID as a decimal integer (the `fromId` of an ownership attestation). " +
          "400 `userId query parameter is required` when missing or empty, 400 `userId must be a valid integer` when not an integer, " +
          "404 `Nullifier not found` when no uniqueness verification is known for it. The first nullifier seen for a user is kept.",
        tags: ["nullifier"],
        querystring: Type.Object({ userId: Type.Optional(Type.String({ description: "decimal integer" })) }),
        response: { 200: Nullifier, 400: ErrorBody, 429: ErrorBody, 404: ErrorBody },
      },
    },
    async (request) => {
      const { userId } = request.query;
      if (userId === undefined || userId === "")
        throw new HttpError(400, "invalid_request", "userId query parameter is required");
      if (!/^-?[0-9]+$/.test(userId))
        throw new HttpError(400, "invalid_request", "userId must be a valid integer");
      const canonical = BigInt(userId).toString();
      const nullifier = await findNullifier(reader, canonical);
      if (nullifier === undefined) throw new HttpError(404, "not_found", "Nullifier not found");
      return { userId: canonical, nullifier };
    },
  );
}
