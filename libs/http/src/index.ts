export { type Static, Type } from "@sinclair/typebox";
export { createHttpApp, type HttpApp, type HttpAppOptions } from "./app";
export { ErrorBody, HttpError } from "./errors";
export { installGracefulShutdown } from "./shutdown";
