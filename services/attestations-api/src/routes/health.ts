import type { HttpApp } from "@humanpass/http";
import { Type } from "@sinclair/typebox";

export async function healthRoutes(app: HttpApp): Promise<void> {
  app.get(
    "/healthCheck",
    {
      schema: {
        summary: "Health check",
        description:
          "The text `Ok` while the process serves requests; not rate-limited. Readiness (Postgres, NATS) is `/readyz`.",
        tags: ["health"],
        response: { 200: Type.String() },
      },
    },
    async (_request, reply) => reply.type("text/plain; charset=utf-8").send("Ok"),
  );
}
