export * from "./catalog";
export * from "./connection";
export * from "./consumer";
export * from "./envelope";
export * from "./outbox";
export * from "./topology";
export { captureTraceContext, tracer } from "./tracing";
