// Route schemas use the OpenAPI keywords (hide, summary, tags) that @fastify/swagger adds to FastifySchema; this
// re-export keeps that augmentation in the compiled declarations the services are built against.
export type { SwaggerOptions } from "@fastify/swagger";
export { type Static, Type } from "@sinclair/typebox";
export {
  CLIENT_INPUT_ERROR_TYPE,
  createHttpApp,
  DEFAULT_HTTP_TIMEOUTS,
  type HttpApp,
  type HttpAppOptions,
  type HttpServerSettings,
  type HttpTimeouts,
  markClientCaused,
  optionalCheck,
  type ReadinessCheck,
} from "./app.ts";
export { ErrorBody, HttpError } from "./errors.ts";
export { type GracefulShutdownOptions, installGracefulShutdown } from "./shutdown.ts";
