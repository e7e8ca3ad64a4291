import { readdirSync } from "node:fs";
import { AgentAuthEnv, checkSettings as checkAgentAuthSettings } from "@humanpass/agent-auth";
import { AttestationsApiEnv } from "@humanpass/attestations-api";
import { ChainIndexerEnv } from "@humanpass/chain-indexer";
import { CommonEnv, ConfigError, loadConfig, refusePlaceholdersInProduction } from "@humanpass/config";
import { checkSettings as checkPaymentGatewaySettings, PaymentGatewayEnv } from "@humanpass/payment-gateway";
import { VerifierEnv } from "@humanpass/verifier";
import { checkSettings as checkWebhooksSettings, WebhooksEnv } from "@humanpass/webhooks";
import { type TObject, Type } from "@sinclair/typebox";
import { repoPath } from "./paths.ts";

export interface ServiceConfig {
  service: string;
  exportName: string;
  schema: TObject;
  /** Rules between variables a service exports as `checkSettings(config)`, when it has them. */
  checkSettings?: (config: unknown) => void;
}

/**
 * Each service's own env schema: the `…Env` TypeBox object its package exports (from its `src/config.ts`), with
 * its `checkSettings` when it has one. Imported by package name: a service's index starts nothing on import.
 */
export async function serviceConfigs(): Promise<ServiceConfig[]> {
  const configs: ServiceConfig[] = [
    {
      service: "agent-auth",
      exportName: "AgentAuthEnv",
      schema: AgentAuthEnv,
      checkSettings: checkAgentAuthSettings as (config: unknown) => void,
    },
    { service: "attestations-api", exportName: "AttestationsApiEnv", schema: AttestationsApiEnv },
    { service: "chain-indexer", exportName: "ChainIndexerEnv", schema: ChainIndexerEnv },
    {
      service: "payment-gateway",
      exportName: "PaymentGatewayEnv",
      schema: PaymentGatewayEnv,
      checkSettings: checkPaymentGatewaySettings as (config: unknown) => void,
    },
    { service: "verifier", exportName: "VerifierEnv", schema: VerifierEnv },
    {
      service: "webhooks",
      exportName: "WebhooksEnv",
      schema: WebhooksEnv,
      checkSettings: checkWebhooksSettings as (config: unknown) => void,
    },
  ];
  const listed = new Set(configs.map((c) => c.service));
  const unlisted = readdirSync(repoPath("services"), { withFileTypes: true })
    .filter((d) => d.isDirectory() && !listed.has(d.name))
    .map((d) => d.name);
  if (unlisted.length > 0) {
    throw new Error(
      `services/${unlisted.join(", services/")}: add its env schema to deploy/validate/src/service-config.ts`,
    );
  }
  return configs;
}

/** Variables libs/service reads for every service on top of CommonEnv (it does not export their schema). */
export const RUNTIME_VARIABLES = [
  "OTEL_EXPORTER_OTLP_ENDPOINT",
  "LOG_PRETTY",
  "DB_POOL_MAX",
  "METRICS_ENABLED",
  "DEPLOYMENT_ENVIRONMENT",
  "SERVICE_VERSION",
  "OTEL_TRACES_SAMPLER",
  "OTEL_TRACES_SAMPLER_ARG",
];

/**
 * What a service would say about this environment at start-up: the problems `loadConfig`, the refusal of
 * placeholders in production and the service's `checkSettings` report, and the variables it does not read at all
 * (usually a typo).
 */
export function checkServiceEnv(
  config: ServiceConfig,
  env: Record<string, string>,
): { problems: { variable: string; message: string }[]; unknown: string[] } {
  const schema = Type.Object({ ...CommonEnv, ...config.schema.properties });
  const known = new Set([...Object.keys(schema.properties), ...RUNTIME_VARIABLES]);
  const unknown = Object.keys(env).filter((k) => !known.has(k));
  try {
    const loaded = loadConfig(schema, env);
    refusePlaceholdersInProduction(loaded);
    config.checkSettings?.(loaded);
    return { problems: [], unknown };
  } catch (e) {
    if (e instanceof ConfigError) return { problems: e.problems, unknown };
    return { problems: [{ variable: "(settings)", message: (e as Error).message }], unknown };
  }
}
