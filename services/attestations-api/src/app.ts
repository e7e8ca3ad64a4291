import { createHttpApp, type HttpApp, type HttpServerSettings } from "@humanpass/http";
import { createMetrics, type Logger, type ServiceMetrics } from "@humanpass/telemetry";
import { SERVICE_NAME } from "./config.ts";
import { createReader } from "./db/queries.ts";
import type { Queryable } from "./db/types.ts";
import { attestationRoutes } from "./routes/attestations.ts";
import { healthRoutes } from "./routes/health.ts";
import { identityRoutes } from "./routes/identities.ts";
import { nullifierRoutes } from "./routes/nullifier.ts";
import { schemaRoutes } from "./routes/schemas.ts";
import { searchRoutes } from "./routes/search.ts";
import { decimalPagingOnly, PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX } from "./routes/shapes.ts";

export const API_PREFIX = "/api/v1";

export interface AppDeps {
  /**
   * What the routes read through: a pool on the service's schema (`createPool` of @humanpass/db) whose sessions
   * have `readSessionSettings` (generic plans, the read timeout).
   */
  pool: Queryable;
  logger: Logger;
  readiness?: Record<string, () => Promise<unknown>>;
  corsOrigins?: string[];
  /** Requests per window per client IP; `false` turns limiting off. */
  rateLimit: { max: number; timeWindowMs: number } | false;
  /** TRUST_PROXY and the HTTP timeouts. */
  http?: HttpServerSettings;
  /** The service's instruments (served at /metrics); a set of the app's own when absent. */
  metrics?: ServiceMetrics;
}

const DESCRIPTION = `Read-only API over the attestation and schema registries (spec 2), served from a read model that the
chain-indexer and verifier events fill. Choices the spec leaves open:

- **Paging**: \`page_number\` starts at 1 (default 1); \`page_size\` defaults to ${PAGE_SIZE_DEFAULT}, maximum ${PAGE_SIZE_MAX}.
  A page past the end is \`200\` with an empty \`data\` and \`nextPage\` null.
- **Order and stable paging**: lists are ordered oldest first by chain position (block number, log index, then id).
  New attestations are always appended at the end, so page boundaries do not move while they arrive: following
  \`nextPage\` until it is null visits every item exactly once. (A revocation removes its item from the lists.)
- **Errors**: a bad query value or path segment is \`400\` with \`{ error, message }\`, never a \`500\`; an unknown path is a
  JSON \`404\`; an unknown attestation is \`404 { message: "Attestation not found" }\`; an unknown schema \`404 Schema not found\`;
  an unknown userId on \`/nullifier\` is \`404 Nullifier not found\`.
  A read that runs longer than \`READ_TIMEOUT_MS\` (a page far down a long list) is cancelled: \`503 { error: "read_timeout" }\`.
- **Rate limiting**: per client IP, a configurable number of requests per window (\`RATE_LIMIT_MAX\` per \`RATE_LIMIT_WINDOW_MS\`);
  over it, \`429 { error: "rate_limited", message }\` with \`Retry-After\` (seconds). \`/api/v1/healthCheck\` is exempt.
- **Names**: \`fromName\`/\`toName\` are empty: no name registry is indexed.
- Revoked attestations are left out of every list (attestations, identities, a schema's page, counts) and still
  returned by \`GET /attestations/{id}\`; expired ones stay listed.`;

/** The HTTP app over the read model; no side effects, so tests build it against their own database. */
export async function buildApp(deps: AppDeps): Promise<HttpApp> {
  const app = await createHttpApp({
    ...deps.http,
    logger: deps.logger,
    readiness: deps.readiness,
    corsOrigins: deps.corsOrigins,
    rateLimit: deps.rateLimit ? { ...deps.rateLimit, exempt: [`${API_PREFIX}/healthCheck`] } : false,
    openapi: { title: "humanpass attestations API", version: "1.0.0", description: DESCRIPTION },
    metrics: deps.metrics ?? createMetrics({ serviceName: SERVICE_NAME }),
  });
  const routeDeps = createReader(deps.pool);
  await app.register(
    async (api) => {
      const scoped = api as unknown as HttpApp;
      scoped.addHook("preValidation", decimalPagingOnly);
      await healthRoutes(scoped);
      await attestationRoutes(scoped, routeDeps);
      await identityRoutes(scoped, routeDeps);
      await nullifierRoutes(scoped, routeDeps);
      await schemaRoutes(scoped, routeDeps);
      await searchRoutes(scoped, routeDeps);
    },
    { prefix: API_PREFIX },
  );
  return app;
}
