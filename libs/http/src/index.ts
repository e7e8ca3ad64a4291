export { createHttpApp, type HttpApp, type HttpAppOptions } from "./app";
export { ErrorBody, HttpError } from "./errors";
export { installGracefulShutdown } from "./shutdown";
export { Type, type Static } from "@sinclair/typebox";
