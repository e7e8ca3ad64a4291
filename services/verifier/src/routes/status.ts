import { type HttpApp, HttpError, Type } from "@humanpass/http";
import type { RouteDeps } from "./deps.ts";

const MAX_BIGINT = 2n ** 63n - 1n;

export function statusRoute(app: HttpApp, deps: RouteDeps): void {
  app.get(
    "/api/status/:id",
    {
      schema: {
        summary: "Status of a verification session",
        params: Type.Object({ id: Type.String() }),
        response: {
          200: Type.Object({
            requestId: Type.String({ description: "the path value as received" }),
            status: Type.Union(["pending", "success", "expired", "not_found"].map((s) => Type.Literal(s))),
          }),
        },
      },
    },
    async (request) => {
      const { id } = request.params;
      if (!/^[0-9]{1,40}$/.test(id))
        throw new HttpError(400, "invalid_request", "id must be an integer session id");
      const sessionId = BigInt(id);
      const status =
        sessionId > MAX_BIGINT ? "not_found" : await deps.sessions.status(sessionId, new Date(deps.clock()));
      return { requestId: id, status };
    },
  );
}
