import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { parseAllDocuments } from "yaml";

/**
 * The alerts of every Prometheus rule file under `deploy/` (a rules file's `groups`, or a PrometheusRule's
 * `spec.groups`), each with the files naming it. A file of another shape (a promtool test, a manifest) has none.
 */
export function deployedAlerts(root: string): Map<string, string[]> {
  const alerts = new Map<string, string[]>();
  const dir = path.join(root, "deploy");
  for (const entry of readdirSync(dir, { recursive: true, encoding: "utf8" }).sort()) {
    if (!/\.ya?ml$/.test(entry) || entry.split(path.sep).includes("node_modules")) continue;
    const text = readFileSync(path.join(dir, entry), "utf8");
    if (!/^\s*-?\s*alert:/m.test(text)) continue;
    for (const doc of parseAllDocuments(text)) {
      const value = doc.toJS({ maxAliasCount: -1 }) as {
        groups?: { rules?: { alert?: string }[] }[];
        kind?: string;
        spec?: { groups?: { rules?: { alert?: string }[] }[] };
      } | null;
      const groups = value?.groups ?? (value?.kind === "PrometheusRule" ? value.spec?.groups : undefined);
      for (const rule of (groups ?? []).flatMap((g) => g.rules ?? [])) {
        if (!rule.alert) continue;
        const files = alerts.get(rule.alert) ?? [];
        const file = path.join("deploy", entry);
        if (!files.includes(file)) files.push(file);
        alerts.set(rule.alert, files);
      }
    }
  }
  return alerts;
}

/** The alerts docs/runbooks/README.md lists: the links of the table under its `## Alerts` heading. */
export function indexedAlerts(root: string): string[] {
  const index = readFileSync(path.join(root, "docs/runbooks/README.md"), "utf8");
  const section = index.split(/^## /m).find((s) => s.startsWith("Alerts\n")) ?? "";
  return [...section.matchAll(/^\| \[([^\]]+)\]\(([^)]+)\)/gm)].map((m) => {
    if (m[2] !== `${m[1]}.md`) return `${m[1]} (links ${m[2]})`;
    return m[1]!;
  });
}

/**
 * What keeps the runbooks and the rules in step: every alert of a rule file under deploy/ is in the index and has
 * its page, docs/runbooks/<alert>.md, titled with its name and saying what to look at and what to do; the index
 * names no alert that no rule defines.
 */
export function runbookProblems(root: string): string[] {
  const rules = deployedAlerts(root);
  const indexed = indexedAlerts(root);
  const problems: string[] = [];
  for (const [alert, files] of rules) {
    if (!indexed.includes(alert))
      problems.push(`${alert} (${files.join(", ")}) is not in docs/runbooks/README.md`);
    const page = path.join(root, "docs/runbooks", `${alert}.md`);
    if (!existsSync(page)) {
      problems.push(`${alert} (${files.join(", ")}) has no runbook docs/runbooks/${alert}.md`);
      continue;
    }
    const text = readFileSync(page, "utf8");
    if (!text.startsWith(`# ${alert}\n`)) problems.push(`docs/runbooks/${alert}.md is not titled # ${alert}`);
    for (const part of ["**Look at.**", "**Do.**"])
      if (!text.includes(part))
        problems.push(`docs/runbooks/${alert}.md has no ${part} (the signal, the action)`);
  }
  for (const alert of indexed)
    if (!rules.has(alert))
      problems.push(`docs/runbooks/README.md lists ${alert}, which no rule file under deploy/ defines`);
  return problems;
}
