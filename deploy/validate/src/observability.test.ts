import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { metricNames, withGrafanaVariables } from "@humanpass/stack";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  ALERTS_FILE,
  ALERTS_TEST_FILE,
  alertRules,
  DASHBOARD_FILE,
  dashboardExpressions,
  documentedSeries,
  POSTGRES_DASHBOARD_FILE,
  prometheusRule,
  promtool,
  RULE_FILES,
  RUNBOOK_URL_BASE,
  RUNBOOKS_DIR,
  ruleGroups,
  rulesWithFor,
} from "./observability.ts";

const scratch = mkdtempSync(path.join(tmpdir(), "humanpass-observability-"));
const rules = alertRules();
// The series metrics.md lists, and those the rules record themselves (humanpass:…).
const series = new Set([
  ...documentedSeries(),
  ...ruleGroups().flatMap((g) => g.rules.flatMap((r) => ("record" in r ? [r.record] : []))),
]);

describe.each(RULE_FILES)("deploy/observability: $rules", (ruleFile) => {
  const fileRules = alertRules(ruleGroups(readFileSync(ruleFile.rules, "utf8")));

  it("passes promtool check rules", () => {
    const { ok, output } = promtool(["check", "rules", ruleFile.rules]);
    expect(output).toMatch(/SUCCESS: \d+ rules found/);
    expect(ok, output).toBe(true);
  });

  it("passes its promtool unit tests", () => {
    const { ok, output } = promtool(["test", "rules", ruleFile.tests]);
    expect(ok, output).toBe(true);
    expect(output).toMatch(/SUCCESS/);
  });

  it("has a unit test where each alert fires and one where it does not", () => {
    const tests = (
      parse(readFileSync(ruleFile.tests, "utf8")) as {
        tests: { alert_rule_test?: { alertname: string; exp_alerts?: unknown[] }[] }[];
      }
    ).tests.flatMap((t) => t.alert_rule_test ?? []);
    const missing = [...new Set(fileRules.map((r) => r.alert))].flatMap((alert) => {
      const own = tests.filter((t) => t.alertname === alert);
      return [
        ...(own.some((t) => (t.exp_alerts ?? []).length > 0) ? [] : [`${alert}: never expected to fire`]),
        ...(own.some((t) => (t.exp_alerts ?? []).length === 0) ? [] : [`${alert}: never expected silent`]),
      ];
    });
    expect(missing).toEqual([]);
  });

  it("gives every alert a severity, a summary and a runbook_url to its own page docs/runbooks/<alert>.md", () => {
    const problems = fileRules.flatMap((r) => {
      const url = r.annotations?.runbook_url ?? "";
      return [
        ...(["critical", "warning"].includes(r.labels?.severity ?? "") ? [] : [`${r.alert}: severity`]),
        ...(r.annotations?.summary ? [] : [`${r.alert}: no summary`]),
        ...(url === `${RUNBOOK_URL_BASE}${r.alert}.md` && existsSync(path.join(RUNBOOKS_DIR, `${r.alert}.md`))
          ? []
          : [`${r.alert}: runbook_url ${url} is not its page docs/runbooks/${r.alert}.md`]),
      ];
    });
    expect(problems).toEqual([]);
  });

  it("selects only series docs/metrics.md lists", () => {
    const unknown = fileRules.flatMap((r) =>
      metricNames(r.expr)
        .names.filter((n) => !series.has(n))
        .map((n) => `${r.alert}: ${n}`),
    );
    expect(unknown).toEqual([]);
  });

  it("is rendered into the prod overlay's PrometheusRule (npm run -s observability -w @humanpass/deploy-validate -- prometheus-rule)", () => {
    expect(readFileSync(ruleFile.prometheusRule, "utf8")).toBe(prometheusRule(ruleFile));
    const manifest = parse(readFileSync(ruleFile.prometheusRule, "utf8"));
    expect(alertRules(manifest.spec.groups)).toEqual(fileRules);
  });
});

describe("deploy/observability/alerts.yml", () => {
  it("promtool's unit tests fail when an alert does not behave as tested", () => {
    const broken = path.join(scratch, "alerts.yml");
    writeFileSync(
      broken,
      readFileSync(ALERTS_FILE, "utf8").replace(
        "humanpass_outbox_oldest_pending_age_seconds) > 60",
        "humanpass_outbox_oldest_pending_age_seconds) > 600",
      ),
    );
    writeFileSync(path.join(scratch, "alerts.test.yml"), readFileSync(ALERTS_TEST_FILE, "utf8"));
    const { ok, output } = promtool(["test", "rules", "alerts.test.yml"], scratch);
    expect(ok).toBe(false);
    expect(output).toMatch(/alertname: HumanpassOutboxStale/);
  });

  it("renders the compose test's copy with short for: and nothing else changed", () => {
    const copy = path.join(scratch, "short.yml");
    writeFileSync(copy, rulesWithFor("5s"));
    expect(promtool(["check", "rules", copy]).ok).toBe(true);
    const short = alertRules(parse(readFileSync(copy, "utf8")).groups);
    expect(short.map((r) => r.for ?? "0s").every((d) => d === "5s" || d === "0s")).toBe(true);
    expect(short.map(({ for: _, ...r }) => r)).toEqual(rules.map(({ for: _, ...r }) => r));
  });
});

describe("deploy/observability/dashboard.json", () => {
  const expressions = dashboardExpressions();

  it("has an overview and a row per service", () => {
    const dashboard = JSON.parse(
      readFileSync(path.join(path.dirname(ALERTS_FILE), "dashboard.json"), "utf8"),
    );
    const rows = dashboard.panels
      .filter((p: { type: string }) => p.type === "row")
      .map((p: { title: string }) => p.title);
    expect(rows).toEqual([
      "Overview",
      "verifier",
      "attestations-api",
      "agent-auth",
      "payment-gateway",
      "chain-indexer",
      "webhooks",
    ]);
    expect(expressions.length).toBeGreaterThan(40);
  });

  it("a panel with a series nobody exports, or a broken expression, is reported", () => {
    expect(metricNames('sum(rate(humanpass_nobody_total{a="b"}[1m])) / up').names).toEqual([
      "humanpass_nobody_total",
      "up",
    ]);
    expect(series.has("humanpass_nobody_total")).toBe(false);
    expect(metricNames("sum(rate(x[1m])").errors.length).toBeGreaterThan(0);
    const file = path.join(scratch, "bad.yml");
    writeFileSync(
      file,
      JSON.stringify({ groups: [{ name: "d", rules: [{ record: "r", expr: "rate(x[1m]" }] }] }),
    );
    expect(promtool(["check", "rules", file]).ok).toBe(false);
  });
});

describe.each([DASHBOARD_FILE, POSTGRES_DASHBOARD_FILE])("the dashboard %s", (dashboard) => {
  const expressions = dashboardExpressions(dashboard);

  it("has expressions promtool parses (as recording rules)", () => {
    const file = path.join(scratch, `${path.basename(dashboard)}-rules.yml`);
    const recording = expressions.map((e, i) => ({
      record: `dashboard:expr_${i}`,
      expr: withGrafanaVariables(e.expr),
    }));
    writeFileSync(file, JSON.stringify({ groups: [{ name: "dashboard", rules: recording }] }));
    const { ok, output } = promtool(["check", "rules", file]);
    expect(ok, output).toBe(true);
    expect(output).toContain(`SUCCESS: ${expressions.length} rules found`);
  });

  it("selects only series docs/metrics.md lists", () => {
    const unknown = expressions.flatMap((e) => {
      const { names, errors } = metricNames(withGrafanaVariables(e.expr));
      return [
        ...names.filter((n) => !series.has(n)).map((n) => `${e.panel}: ${n}`),
        ...errors.map((at) => `${e.panel}: syntax error at ${at}`),
      ];
    });
    expect(unknown).toEqual([]);
  });
});
