import type { Reader } from "../db/queries";

/** What the routes read through: kysely to build queries, a pool to run them prepared. */
export type RouteDeps = Reader;
