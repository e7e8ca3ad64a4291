import type { Problem } from "./problems.ts";
import { checkServiceEnv, type ServiceConfig } from "./service-config.ts";

type Obj = Record<string, any>;

function report(
  config: ServiceConfig,
  env: Record<string, string>,
  where: string,
  path: (variable: string) => string,
  problems: Problem[],
  warnings: string[],
): void {
  const result = checkServiceEnv(config, env);
  for (const p of result.problems)
    problems.push({
      where,
      path: path(p.variable),
      message: `${config.service} would not start: ${p.message}`,
    });
  for (const variable of result.unknown)
    warnings.push(`${where}: ${config.service} does not read ${variable}`);
}

/**
 * Starts each compose service's config loader, on paper, with the environment compose would give it: `resolved`
 * is the model `compose config` prints (variables interpolated, `environment` a map).
 */
export function checkComposeEnv(
  resolved: Obj,
  configs: ServiceConfig[],
  problems: Problem[],
  warnings: string[],
): void {
  for (const config of configs) {
    const service = resolved?.services?.[config.service];
    if (!service) {
      problems.push({
        where: "docker-compose.yml",
        path: `/services/${config.service}`,
        message: "the service is missing",
      });
      continue;
    }
    // A variable listed without a value and unset where compose runs reaches the container unset: null here.
    const env = Object.fromEntries(
      Object.entries<unknown>(service.environment ?? {})
        .filter(([, v]) => v !== null)
        .map(([k, v]) => [k, String(v)]),
    );
    report(
      config,
      env,
      "docker-compose.yml",
      (v) => `/services/${config.service}/environment/${v}`,
      problems,
      warnings,
    );
  }
}

/** A stand-in for a Secret's value, shaped like what the variable expects. */
function secretStandIn(variable: string): string {
  if (variable === "DATABASE_URL") return "postgres://role:secret@humanpass-db-rw:5432/humanpass";
  if (variable.endsWith("_URL")) return "https://secret.invalid";
  // Key lists (HUMAN_PROOF_NONCE_KEYS) and tokens (the webhooks ADMIN_TOKEN) refuse short values.
  if (variable.endsWith("_KEYS") || variable.endsWith("_TOKEN")) return "secret".repeat(8);
  return "secret";
}

/**
 * The environment a service's Deployment gives its container in a rendered overlay (its ConfigMaps, literal env,
 * stand-ins for Secrets) and the container's image; undefined when the overlay has no such Deployment.
 */
export function deploymentEnv(
  manifests: unknown[],
  service: string,
): { image: string; env: Record<string, string> } | undefined {
  const all = manifests as Obj[];
  const configMaps = new Map(
    all.filter((m) => m?.kind === "ConfigMap").map((m) => [m.metadata.name, m.data ?? {}]),
  );
  const deployment = all.find((m) => m?.kind === "Deployment" && m.metadata?.name === service);
  if (!deployment) return undefined;
  const container = deployment.spec?.template?.spec?.containers?.[0] ?? {};
  const env: Record<string, string> = {};
  for (const source of container.envFrom ?? []) {
    Object.assign(env, configMaps.get(source.configMapRef?.name) ?? {});
  }
  for (const entry of container.env ?? []) {
    if (entry.value !== undefined) env[entry.name] = String(entry.value);
    else if (entry.valueFrom?.secretKeyRef) {
      if (entry.valueFrom.secretKeyRef.optional !== true) env[entry.name] = secretStandIn(entry.name);
    } else if (entry.valueFrom?.fieldRef) env[entry.name] = `${service}-0`;
  }
  return { image: String(container.image ?? ""), env };
}

/** Does the same for each service Deployment of a rendered overlay: its ConfigMaps, literal env and Secrets. */
export function checkManifestEnv(
  manifests: unknown[],
  where: string,
  configs: ServiceConfig[],
  problems: Problem[],
  warnings: string[],
): void {
  for (const config of configs) {
    const found = deploymentEnv(manifests, config.service);
    if (!found) {
      problems.push({ where, path: "/", message: `no Deployment for ${config.service}` });
      continue;
    }
    const { env } = found;
    report(
      config,
      env,
      `${where}: Deployment/${config.service}`,
      (v) => `/spec/template/spec/containers/0/env/${v}`,
      problems,
      warnings,
    );
  }
}
