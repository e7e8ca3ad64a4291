// Route schemas use the OpenAPI keywords (hide, summary, tags) that @fastify/swagger adds to FastifySchema; this
// re-export keeps that augmentation in the compiled declarations the services are built against.
export type { SwaggerOptions } from "@fastify/swagger";
export { type Static, Type } from "@sinclair/typebox";
export { createHttpApp, type HttpApp, type HttpAppOptions } from "./app";
export { ErrorBody, HttpError } from "./errors";
export { installGracefulShutdown } from "./shutdown";
