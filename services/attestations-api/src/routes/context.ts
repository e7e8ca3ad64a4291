import type { Reader } from "../db/queries.ts";

/** What the routes read through: the service's pool and the schemas it holds in memory. */
export type RouteDeps = Reader;
