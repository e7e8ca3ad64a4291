import { describe, expect, it } from "vitest";
import { renderForLint } from "./deploy.ts";
import { disruptionBudgetProblems, disruptionsAllowed } from "./disruption-budget.ts";
import { parseManifests } from "./kustomize.ts";

type Obj = Record<string, any>;

describe("disruptionBudgetProblems", () => {
  const rendered = (overlay: string) => parseManifests(renderForLint(overlay)) as Obj[];
  const find = (ms: Obj[], kind: string, name: string) =>
    ms.find((m) => m.kind === kind && m.metadata.name === name)!;

  it("finds every committed budget letting a pod go at its workload's minimum scale", () => {
    for (const overlay of ["dev", "prod"])
      expect(disruptionBudgetProblems(rendered(overlay), overlay)).toEqual([]);
  });

  it("refuses a budget that blocks drains at the autoscaler's minimum, naming it", () => {
    const ms = rendered("prod");
    // The budget this check was written for: webhooks' HPA minimum is 2 in prod, and 2 had to stay available.
    expect(find(ms, "HorizontalPodAutoscaler", "webhooks").spec.minReplicas).toBe(2);
    find(ms, "PodDisruptionBudget", "webhooks").spec = {
      minAvailable: 2,
      selector: { matchLabels: { "app.kubernetes.io/name": "webhooks" } },
    };
    // NATS: 3 replicas, none of which may go.
    find(ms, "PodDisruptionBudget", "nats").spec.maxUnavailable = 0;
    // A percentage rounded up to every pod.
    find(ms, "PodDisruptionBudget", "verifier").spec = {
      minAvailable: "90%",
      selector: { matchLabels: { "app.kubernetes.io/name": "verifier" } },
    };
    find(ms, "PodDisruptionBudget", "agent-auth").spec.selector.matchLabels["app.kubernetes.io/name"] =
      "agent";
    expect(
      disruptionBudgetProblems(ms, "prod")
        .map((p) => `${p.where} ${p.path}: ${p.message}`)
        .sort(),
    ).toEqual([
      "prod: PodDisruptionBudget/agent-auth /spec/selector: selects the pods of no workload",
      "prod: PodDisruptionBudget/nats /spec/maxUnavailable: allows no disruption at the minimum scale of StatefulSet/nats (3 replicas): a node drain would wait forever; use maxUnavailable: 1",
      "prod: PodDisruptionBudget/verifier /spec/minAvailable: allows no disruption at the minimum scale of Deployment/verifier (3 replicas): a node drain would wait forever; use maxUnavailable: 1",
      "prod: PodDisruptionBudget/webhooks /spec/minAvailable: allows no disruption at the minimum scale of Deployment/webhooks (2 replicas): a node drain would wait forever; use maxUnavailable: 1",
    ]);
  });

  it("counts as the disruption controller does", () => {
    expect(disruptionsAllowed({ spec: { minAvailable: 2 } }, 3)).toBe(1);
    expect(disruptionsAllowed({ spec: { minAvailable: "50%" } }, 3)).toBe(1);
    expect(disruptionsAllowed({ spec: { maxUnavailable: "10%" } }, 3)).toBe(1);
    expect(disruptionsAllowed({ spec: { maxUnavailable: 1 } }, 1)).toBe(1);
    expect(disruptionsAllowed({ spec: { minAvailable: 1 } }, 1)).toBe(0);
  });
});
