import type { Kysely } from "@humanpass/db";
import type { Database } from "../db/types";

export interface RouteDeps {
  db: Kysely<Database>;
}
