// PromQL as the dashboard and the alert rules hold it: the expressions of a Grafana dashboard, and the metric names
// an expression selects (read by deploy/validate's offline checks and by the compose test against its Prometheus).
import { parser } from "@prometheus-io/lezer-promql";

interface DashboardPanel {
  title?: string;
  type?: string;
  panels?: DashboardPanel[];
  targets?: { expr?: string; refId?: string }[];
}

/** Every PromQL expression of a Grafana dashboard (rows' collapsed panels included), with the panel it is in. */
export function dashboardExpressions(dashboard: {
  panels: DashboardPanel[];
}): { panel: string; expr: string }[] {
  const out: { panel: string; expr: string }[] = [];
  const walk = (panels: DashboardPanel[], row: string) => {
    for (const p of panels) {
      if (p.type === "row") {
        walk(p.panels ?? [], p.title ?? "");
        continue;
      }
      for (const t of p.targets ?? [])
        if (t.expr) out.push({ panel: `${row} / ${p.title} / ${t.refId}`, expr: t.expr });
      walk(p.panels ?? [], row);
    }
  };
  walk(dashboard.panels, "");
  return out;
}

/** Grafana's built-in interval variables, replaced as Grafana would before the query reaches Prometheus. */
export function withGrafanaVariables(expr: string): string {
  return expr.replace(/\$__rate_interval|\$__interval|\$__range/g, "1m");
}

/** The metric names an expression selects (lezer-promql, the grammar of Prometheus' own UI), and where it has syntax errors. */
export function metricNames(expr: string): { names: string[]; errors: number[] } {
  const names = new Set<string>();
  const errors: number[] = [];
  parser.parse(expr).iterate({
    enter(node) {
      if (node.type.isError) errors.push(node.from);
      if (node.name === "VectorSelector") {
        const id = node.node.getChild("Identifier");
        if (id) names.add(expr.slice(id.from, id.to));
      }
    },
  });
  return { names: [...names], errors };
}
