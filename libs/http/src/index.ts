export { type Static, Type } from "@sinclair/typebox";
export {
  createHttpApp,
  DEFAULT_HTTP_TIMEOUTS,
  type HttpApp,
  type HttpAppOptions,
  type HttpServerSettings,
  type HttpTimeouts,
  optionalCheck,
  type ReadinessCheck,
} from "./app";
export { ErrorBody, HttpError } from "./errors";
export { installGracefulShutdown } from "./shutdown";
