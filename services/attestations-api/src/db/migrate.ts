import { ensureDatabase, type Kysely, migrateToLatest } from "@humanpass/db";
import { SCHEMA } from "../config.ts";
import { migrations } from "./migrations/index.ts";

/** The same migrations the service runs at start-up, for the CLI that may run before it ever did. */
export async function migrateReadModel(db: Kysely<any>, connectionString: string): Promise<string[]> {
  await ensureDatabase(connectionString);
  return migrateToLatest(db, { schema: SCHEMA, migrations });
}
