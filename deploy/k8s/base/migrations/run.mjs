/**
 * Applies the migrations of the named services (all of them when none is named) to DATABASE_URL, each inside its
 * own schema, exactly as the services do at start-up (advisory-locked, so it is safe while they run).
 * `make migrate` runs it through deploy/migrate/run.mjs; the Kubernetes migration Job mounts this file from a
 * ConfigMap into a service image (which has the service's compiled migrations and @humanpass/db), so no image
 * needs to ship it. Plain JavaScript, so that plain `node` runs it where no TypeScript tooling is installed.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createDb, ensureDatabase, migrateToLatest } from "@humanpass/db";

/** @type {Record<string, string>} */
const SCHEMAS = {
  verifier: "verifier",
  "chain-indexer": "chain_indexer",
  "attestations-api": "attestations",
  "agent-auth": "agent_auth",
  "payment-gateway": "payment_gateway",
  webhooks: "webhooks",
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

/** The repository (or image) root: the nearest folder above this file that has `services/`. */
function findRoot() {
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, "services"))) return dir;
    if (path.dirname(dir) === dir) throw new Error("no services/ folder above this script");
  }
}

const root = findRoot();
await ensureDatabase(url);
for (const name of names) {
  const { migrations } = await import(path.join(root, "services", name, "dist/db/migrations/index.js"));
  const db = createDb({ connectionString: url, schema: SCHEMAS[name], max: 1 });
  try {
    let newer = [];
    const applied = await migrateToLatest(db, {
      schema: SCHEMAS[name],
      migrations,
      onNewerSchema: (names) => {
        newer = names;
      },
    });
    const outcome =
      newer.length > 0
        ? `a later release's schema (${newer.join(", ")} unknown here): left as it is`
        : applied.length > 0
          ? `applied ${applied.join(", ")}`
          : "up to date";
    process.stdout.write(`${name}: ${outcome}\n`);
  } finally {
    await db.destroy();
  }
}
