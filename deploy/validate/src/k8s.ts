import { fileURLToPath } from "node:url";
import type { Problem } from "./problems.ts";
import { strictProblems } from "./strict.ts";

interface Manifest {
  apiVersion?: unknown;
  kind?: unknown;
  metadata?: { name?: unknown };
}

/** The packages of models generated from the published CRDs of the operators we use, by API group. */
const CRD_MODELS: Record<string, string> = {
  "postgresql.cnpg.io": "@kubernetes-models/cloudnative-pg",
  "monitoring.coreos.com": "@kubernetes-models/prometheus-operator",
  "gateway.networking.k8s.io": "@kubernetes-models/gateway-api",
  "cert-manager.io": "@kubernetes-models/cert-manager",
};

/** Kinds no package models, checked by a module of ours (its model class and `I<kind>` interface). */
const LOCAL_MODELS: Record<string, string> = {
  "barmancloud.cnpg.io/v1/ObjectStore": fileURLToPath(new URL("./object-store.ts", import.meta.url)),
};

/**
 * `apps/v1` + `Deployment` → `kubernetes-models/apps/v1/Deployment`; core `v1` → `kubernetes-models/v1/Service`;
 * `postgresql.cnpg.io/v1` + `Cluster` → `@kubernetes-models/cloudnative-pg/postgresql.cnpg.io/v1/Cluster`.
 */
function modelPath(apiVersion: string, kind: string): string {
  const local = LOCAL_MODELS[`${apiVersion}/${kind}`];
  if (local) return local;
  const group = apiVersion.includes("/") ? apiVersion.slice(0, apiVersion.indexOf("/")) : "";
  return `${CRD_MODELS[group] ?? "kubernetes-models"}/${apiVersion}/${kind}`;
}

interface AjvLikeError {
  instancePath?: string;
  message?: string;
  params?: Record<string, unknown>;
}

const describeError = (e: AjvLikeError) =>
  `${e.message ?? "invalid"}${e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : ""}`;

/** kustomize wraps long base64 values over lines; the API server's decoder skips the line breaks, so do we. */
function asTheApiServerReadsIt(raw: unknown): unknown {
  const m = raw as { kind?: string; data?: Record<string, unknown> };
  if (m.kind !== "Secret" || !m.data) return raw;
  const data = Object.fromEntries(
    Object.entries(m.data).map(([k, v]) => [k, typeof v === "string" ? v.replace(/[\r\n]/g, "") : v]),
  );
  return { ...m, data };
}

/**
 * Validates rendered manifests against the Kubernetes API schemas compiled into the kubernetes-models package,
 * the CloudNativePG CRD schemas of @kubernetes-models/cloudnative-pg and the prometheus-operator's of
 * @kubernetes-models/prometheus-operator, the Gateway API's of @kubernetes-models/gateway-api, cert-manager's of
 * @kubernetes-models/cert-manager and the Barman Cloud
 * plugin's ObjectStore (object-store.ts) (types, required fields, enums), then
 * strictly (unknown fields); an object of a kind none knows is an error, so a typo in `kind` or `apiVersion`
 * cannot slip through.
 */
export async function validateManifests(sets: { where: string; manifests: unknown[] }[]): Promise<Problem[]> {
  const problems: Problem[] = [];
  const forStrictCheck: Parameters<typeof strictProblems>[0] = [];
  for (const { where, manifests } of sets) {
    // Each set is a render of its own: an overlay built on another (prod-restore on prod) holds its objects again.
    const seen = new Set<string>();
    for (const [index, raw] of manifests.entries()) {
      const m = raw as Manifest;
      const label = `${where}: ${String(m?.kind ?? "?")}/${String(m?.metadata?.name ?? `#${index}`)}`;
      if (
        typeof m !== "object" ||
        m === null ||
        typeof m.apiVersion !== "string" ||
        typeof m.kind !== "string"
      ) {
        problems.push({ where: label, path: "/", message: "a manifest needs string apiVersion and kind" });
        continue;
      }
      const identity = `${m.apiVersion}/${m.kind}/${(raw as any).metadata?.namespace ?? ""}/${String(m.metadata?.name)}`;
      if (seen.has(identity))
        problems.push({ where: label, path: "/metadata/name", message: "defined twice" });
      seen.add(identity);

      let Model: (new (data: unknown) => { validate(): void }) | undefined;
      try {
        const module = await import(modelPath(m.apiVersion, m.kind));
        Model = module[m.kind];
      } catch {
        Model = undefined;
      }
      if (!Model) {
        problems.push({
          where: label,
          path: "/",
          message: `no schema for ${m.apiVersion} ${m.kind}: unknown kind or API version`,
        });
        continue;
      }
      forStrictCheck.push({ manifest: raw, label, module: modelPath(m.apiVersion, m.kind), kind: m.kind });
      try {
        new Model(asTheApiServerReadsIt(raw)).validate();
      } catch (e) {
        const errors = (e as { errors?: AjvLikeError[] }).errors;
        if (!errors) throw e;
        for (const error of errors)
          problems.push({ where: label, path: error.instancePath || "/", message: describeError(error) });
      }
    }
  }
  return [...problems, ...strictProblems(forStrictCheck)];
}
