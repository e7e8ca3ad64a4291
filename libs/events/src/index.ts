export * from "./catalog.ts";
export * from "./envelope.ts";
export * from "./replay.ts";
export * from "./subjects.ts";
export * from "./subscribe.ts";
export * from "./webhooks.ts";
