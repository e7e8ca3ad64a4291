import { hostname } from "node:os";
import { CommonEnv } from "@humanpass/config";
import type { TObject, TSchema } from "@sinclair/typebox";
import { REPO_ROOT } from "./paths.ts";
import { serviceConfigs } from "./service-config.ts";

/** Set by libs/service for every service on top of CommonEnv (kept here because libs/service does not export them). */
const SERVICE_RUNTIME_ENV: [string, string, string][] = [
  [
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "(unset: no export)",
    "OTLP/HTTP endpoint of a collector, e.g. http://otel-collector:4318",
  ],
  ["LOG_PRETTY", "false", "true or false; human-readable logs (make up), JSON otherwise"],
  ["DB_POOL_MAX", "10", "an integer >= 1: Postgres connections per replica"],
  [
    "SHUTDOWN_DRAIN_MS",
    "5000",
    "an integer >= 0: after SIGTERM, how long /readyz answers 503 while requests are still served, before the server closes (waiting for requests in flight) and consumers, NATS and the pool stop",
  ],
  [
    "METRICS_ENABLED",
    "true",
    "true or false; false: no instruments, /metrics answers an empty body (docs/metrics.md)",
  ],
  [
    "DEPLOYMENT_ENVIRONMENT",
    "development",
    "resource attribute deployment.environment of every span and series",
  ],
  ["SERVICE_VERSION", "0.1.0", "resource attribute service.version of every span and series"],
  [
    "OUTBOX_RETENTION_MS",
    "3600000",
    "an integer >= 0 (milliseconds): how long published outbox rows are kept before they are deleted",
  ],
  [
    "INBOX_RETENTION_MARGIN_MS",
    "86400000",
    'an integer >= 0 (milliseconds): inbox rows are kept for the longest max_age of the service\'s streams plus this (never deleted while a stream has no max_age); docs/deploy.md, "JetStream retention"',
  ],
  [
    "OUTBOX_GATHER_MS",
    "10",
    'an integer from 0 to 1000 (milliseconds): once the outbox relay has published what it found, how long it lets further commits land before it looks again: fewer relay round trips, each event up to this much later (docs/performance.md, "payment-gateway")',
  ],
  [
    "PURGE_INTERVAL_MS",
    "60000",
    "an integer >= 1000 (milliseconds): how often published outbox rows, expired inbox rows and the service's own expired rows (verifier sessions, payment-gateway proof nonces and reservations) are deleted",
  ],
  [
    "OTEL_TRACES_SAMPLER",
    "(unset: parentbased_always_on)",
    "read by the OpenTelemetry SDK: always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio",
  ],
  [
    "OTEL_TRACES_SAMPLER_ARG",
    "(unset)",
    "read by the OpenTelemetry SDK: the ratio (0 to 1) of the traceidratio samplers",
  ],
];

function describeType(schema: Record<string, any>): string {
  if (schema.description) return schema.description;
  if (schema.anyOf)
    return schema.anyOf
      .map((s: any) => (s.const !== undefined ? String(s.const) : describeType(s)))
      .join(", ");
  if (schema.pattern) return `a string matching \`${schema.pattern}\``;
  return schema.type ?? "a string";
}

/** Defaults computed on this machine (paths, host name) are shown by what they mean, not by their value here. */
function describeDefault(schema: Record<string, any>, required: boolean): string {
  if (schema.default === undefined) return required ? "**required**" : "(unset)";
  const value = String(schema.default);
  if (value === hostname()) return "(the host name)";
  if (value.startsWith(REPO_ROOT)) return `\`<repo>${value.slice(REPO_ROOT.length)}\``;
  return value === "" ? '`""`' : `\`${value}\``;
}

function table(schema: TObject): string[] {
  const rows = ["| variable | default | accepted values |", "| - | - | - |"];
  for (const [name, prop] of Object.entries(schema.properties as Record<string, TSchema>)) {
    const escaped = describeType(prop).replace(/\|/g, "\\|").replace(/</g, "&lt;");
    rows.push(
      `| \`${name}\` | ${describeDefault(prop, schema.required?.includes(name) ?? false)} | ${escaped} |`,
    );
  }
  return rows;
}

/** Every service's own variables, read from the TypeBox schema its config.ts exports (`…Env`). */
export async function renderConfigTables(): Promise<string> {
  const out: string[] = ["### Every service", ""];
  out.push(...table({ properties: CommonEnv, required: [] } as unknown as TObject));
  for (const [name, def, accepted] of SERVICE_RUNTIME_ENV)
    out.push(`| \`${name}\` | ${def === "(unset: no export)" ? def : `\`${def}\``} | ${accepted} |`);
  out.push("");
  for (const { service, exportName, schema } of await serviceConfigs()) {
    out.push(`### ${service}`, "", `From \`services/${service}/src/config.ts\` (\`${exportName}\`).`, "");
    out.push(...table(schema), "");
  }
  return out.join("\n");
}

export const CONFIG_BEGIN =
  "<!-- BEGIN GENERATED CONFIGURATION TABLES: npm run docs -w @humanpass/deploy-validate -->";
export const CONFIG_END = "<!-- END GENERATED CONFIGURATION TABLES -->";

export async function withConfigTables(markdown: string): Promise<string> {
  const start = markdown.indexOf(CONFIG_BEGIN);
  const end = markdown.indexOf(CONFIG_END);
  if (start < 0 || end < start) throw new Error("docs/deploy.md lacks the generated-configuration markers");
  return `${markdown.slice(0, start + CONFIG_BEGIN.length)}\n\n${await renderConfigTables()}\n${markdown.slice(end)}`;
}
