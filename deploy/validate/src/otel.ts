import { parse } from "yaml";
import type { Problem } from "./problems.ts";

const KINDS = ["receivers", "processors", "exporters", "connectors"] as const;

/**
 * Checks an OpenTelemetry collector config the way the collector does at start: every component a pipeline
 * names is defined (connectors count as receivers and exporters), every enabled extension is defined, and each
 * pipeline has at least one receiver and one exporter.
 */
export function validateOtelConfig(text: string, where = "deploy/otel-collector.yaml"): Problem[] {
  let config: any;
  try {
    config = parse(text);
  } catch (e) {
    return [{ where, path: "/", message: `not valid YAML: ${(e as Error).message}` }];
  }
  const problems: Problem[] = [];
  const defined = Object.fromEntries(
    KINDS.map((k) => [k, new Set(Object.keys(config?.[k] ?? {}))]),
  ) as Record<(typeof KINDS)[number], Set<string>>;
  const pipelines: Record<string, any> = config?.service?.pipelines ?? {};
  if (Object.keys(pipelines).length === 0)
    problems.push({ where, path: "/service/pipelines", message: "no pipeline" });
  for (const [name, pipeline] of Object.entries(pipelines)) {
    if (!/^(traces|metrics|logs)(\/.+)?$/.test(name)) {
      problems.push({
        where,
        path: `/service/pipelines/${name}`,
        message: "a pipeline is named traces, metrics or logs[/name]",
      });
    }
    for (const kind of ["receivers", "processors", "exporters"] as const) {
      const names: unknown = pipeline?.[kind] ?? [];
      if (!Array.isArray(names)) {
        problems.push({ where, path: `/service/pipelines/${name}/${kind}`, message: "must be a list" });
        continue;
      }
      if (kind !== "processors" && names.length === 0) {
        problems.push({
          where,
          path: `/service/pipelines/${name}/${kind}`,
          message: `a pipeline needs at least one of its ${kind}`,
        });
      }
      for (const component of names as string[]) {
        const ok =
          defined[kind].has(component) || (kind !== "processors" && defined.connectors.has(component));
        if (!ok)
          problems.push({
            where,
            path: `/service/pipelines/${name}/${kind}`,
            message: `"${component}" is not defined under ${kind}`,
          });
      }
    }
  }
  const extensions = new Set(Object.keys(config?.extensions ?? {}));
  for (const extension of (config?.service?.extensions ?? []) as string[]) {
    if (!extensions.has(extension))
      problems.push({
        where,
        path: "/service/extensions",
        message: `"${extension}" is not defined under extensions`,
      });
  }
  return problems;
}
