export { jetstreamManager } from "@nats-io/jetstream";
export type { NatsConnection } from "@nats-io/transport-node";
export * from "./catalog";
export * from "./connection";
export * from "./consumer";
export * from "./envelope";
export * from "./outbox";
export * from "./topology";
export { captureTraceContext, tracer } from "./tracing";
