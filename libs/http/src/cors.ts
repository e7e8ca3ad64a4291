import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from "fastify";

const PREFLIGHT_METHODS = "GET,HEAD,PUT,PATCH,POST,DELETE";

/**
 * An onRequest hook answering cross-origin calls from `origins` (`["*"]`: any origin, answered with `*`, as no call
 * carries credentials). A listed origin is echoed back, with `Vary: Origin` on every answer since it depends on the
 * caller. A preflight (OPTIONS with `Access-Control-Request-Method`) from an allowed origin is answered here, 204;
 * from any other, it finds no route (404) and the browser refuses the call.
 */
export function corsHook(origins: string[]) {
  const any = origins.includes("*");
  const allowed = new Set(origins);
  return (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    const origin = request.headers.origin;
    if (!any) reply.header("vary", "Origin");
    if (origin === undefined || !(any || allowed.has(origin))) return done();
    reply.header("access-control-allow-origin", any ? "*" : origin);
    if (request.method !== "OPTIONS" || request.headers["access-control-request-method"] === undefined)
      return done();
    reply.header("access-control-allow-methods", PREFLIGHT_METHODS);
    const requested = request.headers["access-control-request-headers"];
    if (requested !== undefined) {
      reply.header("access-control-allow-headers", requested);
      reply.header("vary", any ? "Access-Control-Request-Headers" : "Origin, Access-Control-Request-Headers");
    }
    reply.code(204).header("content-length", "0").send();
  };
}
