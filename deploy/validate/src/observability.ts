import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { dashboardExpressions as expressionsOf } from "@humanpass/stack";
import { parse, stringify } from "yaml";
import { repoPath } from "./paths.ts";

/** deploy/observability: the alert rules, their unit tests, the Grafana dashboard, the compose Prometheus' config. */
export const ALERTS_FILE = repoPath("deploy/observability/alerts.yml");
export const ALERTS_TEST_FILE = repoPath("deploy/observability/alerts.test.yml");
export const DASHBOARD_FILE = repoPath("deploy/observability/dashboard.json");
export const PROMETHEUS_RULE_FILE = repoPath("deploy/k8s/overlays/prod/monitoring/prometheus-rule.yaml");
export const METRICS_DOC = repoPath("docs/metrics.md");
export const POSTGRES_DASHBOARD_FILE = repoPath("deploy/observability/postgres-dashboard.json");

/**
 * Each rule file of deploy/observability, its promtool unit tests and the prod overlay's PrometheusRule rendered
 * from it: the services' alerts (also loaded by the compose stack's Prometheus) and the CloudNativePG cluster's.
 */
export const RULE_FILES = [
  { name: "humanpass", rules: ALERTS_FILE, tests: ALERTS_TEST_FILE, prometheusRule: PROMETHEUS_RULE_FILE },
  {
    name: "humanpass-postgres",
    rules: repoPath("deploy/observability/postgres-alerts.yml"),
    tests: repoPath("deploy/observability/postgres-alerts.test.yml"),
    prometheusRule: repoPath("deploy/k8s/overlays/prod/monitoring/postgres-rule.yaml"),
  },
] as const;
export const RUNBOOKS_DIR = repoPath("docs/runbooks");
/** Where each alert's runbook_url points: docs/runbooks/<alert>.md on the main branch. */
export const RUNBOOK_URL_BASE = "https://github.com/humanpass/humanpass/blob/main/docs/runbooks/";

export interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
export interface RuleGroup {
  name: string;
  interval?: string;
  rules: (AlertRule | { record: string; expr: string })[];
}

/** The rule file as Prometheus reads it (YAML anchors resolved). */
export function ruleGroups(text = readFileSync(ALERTS_FILE, "utf8")): RuleGroup[] {
  return (parse(text, { maxAliasCount: -1 }) as { groups: RuleGroup[] }).groups;
}

export function alertRules(groups = ruleGroups()): AlertRule[] {
  return groups.flatMap((g) => g.rules.filter((r): r is AlertRule => "alert" in r));
}

/**
 * The promtool of scripts/ensure-promtool.sh (the machine's, or Debian's package unpacked under .run/prometheus),
 * run with `args`; its output, or an error with its output when it exits non-zero.
 */
export function promtool(args: string[], cwd = repoPath()): { ok: boolean; output: string } {
  const bin = execFileSync("bash", [repoPath("scripts/ensure-promtool.sh")], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  }).trim();
  try {
    const output = execFileSync(bin, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    return { ok: true, output };
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string };
    return { ok: false, output: `${err.stdout ?? ""}${err.stderr ?? ""}` };
  }
}

/** The same rules with every `for:` set to `duration` (the compose test's copy: alerts fire within its faults). */
export function rulesWithFor(duration: string, text = readFileSync(ALERTS_FILE, "utf8")): string {
  const groups = ruleGroups(text).map((g) => ({
    ...g,
    rules: g.rules.map((r) => ("alert" in r && r.for ? { ...r, for: duration } : r)),
  }));
  return `# Rendered from deploy/observability/alerts.yml with every \`for:\` set to ${duration}.\n${stringify({ groups }, { lineWidth: 0 })}`;
}

/**
 * The prometheus-operator's PrometheusRule for the prod overlay: the groups of a rule file of RULE_FILES as they
 * are. Committed (deploy/k8s/overlays/prod/monitoring/) so the overlay renders with kustomize alone; the test
 * compares the committed file with this.
 */
export function prometheusRule(ruleFile: (typeof RULE_FILES)[number] = RULE_FILES[0]): string {
  const manifest = {
    apiVersion: "monitoring.coreos.com/v1",
    kind: "PrometheusRule",
    metadata: {
      name: ruleFile.name,
      labels: { "app.kubernetes.io/part-of": "humanpass" },
    },
    spec: { groups: ruleGroups(readFileSync(ruleFile.rules, "utf8")) },
  };
  return [
    `# GENERATED from ${path.relative(repoPath(), ruleFile.rules)}: npm run -s observability -w @humanpass/deploy-validate -- prometheus-rule`,
    "# (deploy/validate/src/observability.test.ts fails when this file differs from what that renders).",
    stringify(manifest, { lineWidth: 0 }),
  ].join("\n");
}

/** Every PromQL expression of a dashboard (deploy/observability/dashboard.json), with the panel it is in. */
export function dashboardExpressions(file = DASHBOARD_FILE): { panel: string; expr: string }[] {
  return expressionsOf(JSON.parse(readFileSync(file, "utf8")));
}

/**
 * The series docs/metrics.md lists (its tables' first column), histograms with their _bucket, _sum and _count,
 * plus what Prometheus adds itself (`up` of every target, `ALERTS` of its rules) and the exporter's `target_info`.
 */
export function documentedSeries(text = readFileSync(METRICS_DOC, "utf8")): Set<string> {
  const series = new Set(["up", "target_info", "ALERTS"]);
  for (const line of text.split("\n")) {
    const cells = line.split("|").map((c) => c.trim());
    const name = cells[1]?.match(/^`([a-zA-Z_:][a-zA-Z0-9_:]*)`/)?.[1];
    if (!name || cells.length < 4) continue;
    if (cells[2] === "histogram")
      for (const suffix of ["_bucket", "_sum", "_count"]) series.add(name + suffix);
    else series.add(name);
  }
  return series;
}
