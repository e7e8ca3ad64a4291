export * from "./catalog";
export * from "./envelope";
export * from "./replay";
export * from "./subjects";
export * from "./subscribe";
export * from "./webhooks";
