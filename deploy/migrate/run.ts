/**
 * Applies the migrations of the named services (all five when none is named) to DATABASE_URL, each inside its
 * own schema, exactly as the services do at start-up (advisory-locked, so it is safe while they run).
 * Used by the Kubernetes migration Job: `tsx deploy/migrate/run.ts <service>…` (tsx is on the images' PATH).
 */
import { createDb, ensureDatabase, type Migration, migrateToLatest } from "@humanpass/db";

const SCHEMAS: Record<string, string> = {
  verifier: "verifier",
  "chain-indexer": "chain_indexer",
  "attestations-api": "attestations",
  "agent-auth": "agent_auth",
  "payment-gateway": "payment_gateway",
};

const url = process.env.DATABASE_URL;
if (!url) {
  process.stderr.write("DATABASE_URL is required\n");
  process.exit(78);
}
const names = process.argv.slice(2).length > 0 ? process.argv.slice(2) : Object.keys(SCHEMAS);
const unknown = names.filter((n) => !(n in SCHEMAS));
if (unknown.length > 0) {
  process.stderr.write(
    `unknown service: ${unknown.join(", ")} (known: ${Object.keys(SCHEMAS).join(", ")})\n`,
  );
  process.exit(64);
}

await ensureDatabase(url);
for (const name of names) {
  const { migrations } = (await import(`../../services/${name}/src/db/migrations/index.ts`)) as {
    migrations: Record<string, Migration>;
  };
  const db = createDb<unknown>({ connectionString: url, schema: SCHEMAS[name], max: 1 });
  try {
    const applied = await migrateToLatest(db, { schema: SCHEMAS[name], migrations });
    process.stdout.write(`${name}: ${applied.length > 0 ? `applied ${applied.join(", ")}` : "up to date"}\n`);
  } finally {
    await db.destroy();
  }
}
