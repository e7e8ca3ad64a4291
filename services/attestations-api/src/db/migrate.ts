import { ensureDatabase, type Kysely, migrateToLatest } from "@humanpass/db";
import { SCHEMA } from "../config";
import { migrations } from "./migrations";

/** The same migrations the service runs at start-up, for the CLI that may run before it ever did. */
export async function migrateReadModel(db: Kysely<any>, connectionString: string): Promise<string[]> {
  await ensureDatabase(connectionString);
  return migrateToLatest(db, { schema: SCHEMA, migrations });
}
