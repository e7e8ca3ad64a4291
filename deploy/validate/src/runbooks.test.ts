import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "./paths.ts";
import { deployedAlerts, indexedAlerts, runbookProblems } from "./runbooks.ts";

/** A copy of what the check reads: deploy/'s rule files and docs/runbooks. */
function copyOfRepo(): string {
  const root = mkdtempSync(path.join(tmpdir(), "humanpass-runbooks-"));
  copies.push(root);
  for (const dir of ["deploy/observability", "deploy/k8s/overlays/prod/monitoring", "docs/runbooks"]) {
    mkdirSync(path.join(root, dir), { recursive: true });
    cpSync(path.join(REPO_ROOT, dir), path.join(root, dir), { recursive: true });
  }
  return root;
}
const copies: string[] = [];
afterAll(() => {
  for (const dir of copies) rmSync(dir, { recursive: true, force: true });
});

function edit(root: string, file: string, change: (text: string) => string): void {
  const at = path.join(root, file);
  const before = readFileSync(at, "utf8");
  const after = change(before);
  expect(after).not.toBe(before);
  writeFileSync(at, after);
}

describe("docs/runbooks against the alert rules under deploy/", () => {
  it("name the same alerts, each with its page", () => {
    const alerts = [...deployedAlerts(REPO_ROOT).keys()];
    expect(alerts).toContain("HumanpassConsumerStalled");
    expect(alerts).toContain("HumanpassAvailabilityBudgetBurn");
    expect([...indexedAlerts(REPO_ROOT)].sort()).toEqual([...alerts].sort());
    expect(runbookProblems(REPO_ROOT)).toEqual([]);
  });

  it("fails when a rule is removed and its runbook stays", () => {
    const root = copyOfRepo();
    for (const file of [
      "deploy/observability/alerts.yml",
      "deploy/k8s/overlays/prod/monitoring/prometheus-rule.yaml",
    ])
      edit(root, file, (text) =>
        text.replace(/\n( *)- alert: HumanpassWebhookDeadLetter\n(?:\1 .*\n)+/, "\n"),
      );
    expect(runbookProblems(root)).toEqual([
      "docs/runbooks/README.md lists HumanpassWebhookDeadLetter, which no rule file under deploy/ defines",
    ]);
  });

  it("fails when a runbook's row or page is removed and its rule stays", () => {
    const root = copyOfRepo();
    edit(root, "docs/runbooks/README.md", (text) => text.replace(/^\| \[HumanpassStreamNearFull\].*\n/m, ""));
    rmSync(path.join(root, "docs/runbooks/HumanpassOutboxStale.md"));
    edit(root, "docs/runbooks/HumanpassDeadLetter.md", (text) => text.replace("**Do.**", "**Then.**"));
    expect(runbookProblems(root)).toEqual([
      "HumanpassOutboxStale (deploy/k8s/overlays/prod/monitoring/prometheus-rule.yaml, deploy/observability/alerts.yml) has no runbook docs/runbooks/HumanpassOutboxStale.md",
      "docs/runbooks/HumanpassDeadLetter.md has no **Do.** (the signal, the action)",
      "HumanpassStreamNearFull (deploy/k8s/overlays/prod/monitoring/prometheus-rule.yaml, deploy/observability/alerts.yml) is not in docs/runbooks/README.md",
    ]);
  });

  it("reads an alert from a rules file of its own under deploy/ (another team's rules)", () => {
    const root = copyOfRepo();
    mkdirSync(path.join(root, "deploy/k8s/base/postgres"), { recursive: true });
    writeFileSync(
      path.join(root, "deploy/k8s/base/postgres/alerts.yml"),
      "groups:\n  - name: db\n    rules:\n      - alert: CnpgReplicationLagging\n        expr: vector(1)\n",
    );
    expect(runbookProblems(root)).toEqual([
      "CnpgReplicationLagging (deploy/k8s/base/postgres/alerts.yml) is not in docs/runbooks/README.md",
      "CnpgReplicationLagging (deploy/k8s/base/postgres/alerts.yml) has no runbook docs/runbooks/CnpgReplicationLagging.md",
    ]);
  });
});
