/**
 * The real attestations-api (services/attestations-api: its migrations, read model and HTTP app) on
 * 127.0.0.1, filled through its own event appliers with the records a test needs.
 */
import {
  buildApp,
  createReadModelSeeder,
  migrations,
  type ReadModelSeeder,
} from "@humanpass/attestations-api";
import { createPool, type Kysely, kyselyOn, migrateToLatest } from "@humanpass/db";
import { DEFAULT_AGENT_OWNERSHIP_SCHEMA } from "@humanpass/human-proof";
import pino from "pino";

const SCHEMA = "attestations";

export interface AttestationsApi extends ReadModelSeeder {
  /** Base URL of the service, e.g. http://127.0.0.1:1234 (ATTESTATIONS_API_URL). */
  url: string;
  /** Its attestations list endpoint, the `attestationsApiBaseUrl` of Billions' agent client. */
  attestationsUrl: string;
  close(): Promise<void>;
}

export async function startAttestationsApi(databaseUrl: string): Promise<AttestationsApi> {
  const pool = createPool({ connectionString: databaseUrl, schema: SCHEMA, max: 4 });
  const db: Kysely<any> = kyselyOn<any>(pool);
  await migrateToLatest(db, { schema: SCHEMA, migrations });
  const app = await buildApp({
    pool,
    logger: pino({ level: "silent" }) as Parameters<typeof buildApp>[0]["logger"],
    rateLimit: false,
  });
  const url = await app.listen({ port: 0, host: "127.0.0.1" });
  const seeder = createReadModelSeeder(db, { ownershipSchema: DEFAULT_AGENT_OWNERSHIP_SCHEMA });

  return {
    url,
    attestationsUrl: `${url}/api/v1/attestations`,
    pairAgent: seeder.pairAgent,
    attest: seeder.attest,
    revoke: seeder.revoke,
    async close() {
      await app.close();
      await db.destroy();
    },
  };
}
