import { readdirSync } from "node:fs";
import { CommonEnv, ConfigError, loadConfig } from "@humanpass/config";
import { type TObject, type TSchema, Type } from "@sinclair/typebox";
import { repoPath } from "./paths";

export interface ServiceConfig {
  service: string;
  exportName: string;
  schema: TObject;
  /** Rules between variables a service exports as `checkSettings(config)`, when it has them. */
  checkSettings?: (config: unknown) => void;
}

/** Each service's own env schema: the `…Env` TypeBox object its `src/config.ts` exports. */
export async function serviceConfigs(): Promise<ServiceConfig[]> {
  const services = readdirSync(repoPath("services"), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
  const found: ServiceConfig[] = [];
  for (const service of services) {
    let module: Record<string, unknown>;
    try {
      module = await import(repoPath("services", service, "src/config.ts"));
    } catch {
      continue;
    }
    const env = Object.entries(module).find(
      ([key, value]) => key.endsWith("Env") && (value as TSchema)?.type === "object",
    );
    if (!env) continue;
    const check = module.checkSettings;
    found.push({
      service,
      exportName: env[0],
      schema: env[1] as TObject,
      ...(typeof check === "function" ? { checkSettings: check as (config: unknown) => void } : {}),
    });
  }
  return found;
}

/**
 * Variables libs/service reads for every service on top of CommonEnv (it does not export their schema), and
 * NODE_ENV, which Node libraries read.
 */
export const RUNTIME_VARIABLES = ["OTEL_EXPORTER_OTLP_ENDPOINT", "LOG_PRETTY", "DB_POOL_MAX", "NODE_ENV"];

/**
 * What a service would say about this environment at start-up: the problems `loadConfig` (and the service's
 * `checkSettings`) report, and the variables it does not read at all (usually a typo).
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
    config.checkSettings?.(loaded);
    return { problems: [], unknown };
  } catch (e) {
    if (e instanceof ConfigError) return { problems: e.problems, unknown };
    return { problems: [{ variable: "(settings)", message: (e as Error).message }], unknown };
  }
}
