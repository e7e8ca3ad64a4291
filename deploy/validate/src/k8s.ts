import { Ajv, type ValidateFunction } from "ajv";
import { CRD_SCHEMAS } from "./crds";
import type { Problem } from "./problems";
import { strictProblems } from "./strict";

interface Manifest {
  apiVersion?: unknown;
  kind?: unknown;
  metadata?: { name?: unknown };
}

/** `apps/v1` + `Deployment` → the kubernetes-models module path `apps/v1/Deployment`; core `v1` → `v1/Service`. */
function modelPath(apiVersion: string, kind: string): string {
  return `kubernetes-models/${apiVersion}/${kind}`;
}

const crdAjv = new Ajv({ strict: false, allErrors: true });
const crdValidators = new Map<string, ValidateFunction>();

function crdValidator(key: string): ValidateFunction | undefined {
  const schema = CRD_SCHEMAS[key];
  if (!schema) return undefined;
  if (!crdValidators.has(key)) crdValidators.set(key, crdAjv.compile(schema));
  return crdValidators.get(key);
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
 * Validates rendered manifests against the Kubernetes API schemas compiled into the kubernetes-models package
 * (types, required fields, enums) and our CloudNativePG schemas; an object of a kind neither knows is an error,
 * so a typo in `kind` or `apiVersion` cannot slip through.
 */
export async function validateManifests(sets: { where: string; manifests: unknown[] }[]): Promise<Problem[]> {
  const problems: Problem[] = [];
  const seen = new Set<string>();
  const forStrictCheck: Parameters<typeof strictProblems>[0] = [];
  for (const { where, manifests } of sets)
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

      const crd = crdValidator(`${m.apiVersion}/${m.kind}`);
      if (crd) {
        if (!crd(raw))
          for (const e of crd.errors ?? [])
            problems.push({ where: label, path: e.instancePath || "/", message: describeError(e) });
        continue;
      }
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
  return [...problems, ...strictProblems(forStrictCheck)];
}
