import type { Problem } from "./problems.ts";

type Obj = Record<string, any>;

/** Workloads whose pods a PodDisruptionBudget counts (a CronJob's or Job's pods are not evicted for a drain). */
const SCALED = new Set(["Deployment", "StatefulSet"]);

/** A label selector (matchLabels and matchExpressions) applied to a pod template's labels. */
function selects(selector: Obj | undefined, labels: Obj): boolean {
  if (!selector) return false;
  const byLabel = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  const byExpression = (selector.matchExpressions ?? []).every((e: Obj) => {
    const has = Object.hasOwn(labels, e.key);
    switch (e.operator) {
      case "In":
        return has && (e.values ?? []).includes(labels[e.key]);
      case "NotIn":
        return !has || !(e.values ?? []).includes(labels[e.key]);
      case "Exists":
        return has;
      case "DoesNotExist":
        return !has;
      default:
        return false;
    }
  });
  return byLabel && byExpression;
}

/** An int-or-percent of `total`, rounded up as the disruption controller rounds both fields. */
function scaled(value: number | string, total: number): number {
  if (typeof value === "number") return value;
  const percent = /^(\d+)%$/.exec(value);
  if (!percent) return Number.NaN;
  return Math.ceil((Number(percent[1]) * total) / 100);
}

/**
 * How many pods of `replicas` healthy ones the budget lets be evicted: what the disruption controller computes as
 * `disruptionsAllowed` when every pod is ready.
 */
export function disruptionsAllowed(budget: Obj, replicas: number): number {
  const spec = budget.spec ?? {};
  if (spec.maxUnavailable !== undefined) return Math.min(replicas, scaled(spec.maxUnavailable, replicas));
  if (spec.minAvailable !== undefined) return Math.max(0, replicas - scaled(spec.minAvailable, replicas));
  return Number.NaN;
}

/**
 * Every PodDisruptionBudget lets at least one pod go at the smallest scale its workloads run at (an HPA's
 * minReplicas, else the workload's replicas): a budget that allows none there blocks `kubectl drain` and every node
 * upgrade for as long as the autoscaler sits at its minimum, which is most of the time.
 */
export function disruptionBudgetProblems(manifests: unknown[], where: string): Problem[] {
  const all = manifests as Obj[];
  const hpas = all.filter((m) => m?.kind === "HorizontalPodAutoscaler");
  const minimumScale = (workload: Obj): number => {
    const hpa = hpas.find(
      (h) =>
        h.spec?.scaleTargetRef?.kind === workload.kind &&
        h.spec?.scaleTargetRef?.name === workload.metadata?.name,
    );
    return hpa ? (hpa.spec.minReplicas ?? 1) : (workload.spec?.replicas ?? 1);
  };
  const problems: Problem[] = [];
  for (const budget of all.filter((m) => m?.kind === "PodDisruptionBudget")) {
    const label = `${where}: PodDisruptionBudget/${budget.metadata?.name}`;
    const workloads = all.filter(
      (m) => SCALED.has(m?.kind) && selects(budget.spec?.selector, m.spec?.template?.metadata?.labels ?? {}),
    );
    if (workloads.length === 0) {
      problems.push({ where: label, path: "/spec/selector", message: "selects the pods of no workload" });
      continue;
    }
    const replicas = workloads.reduce((sum, w) => sum + minimumScale(w), 0);
    const allowed = disruptionsAllowed(budget, replicas);
    const names = workloads.map((w) => `${w.kind}/${w.metadata?.name}`).join(", ");
    if (Number.isNaN(allowed))
      problems.push({
        where: label,
        path: "/spec",
        message: "needs maxUnavailable or minAvailable, an integer or a percentage",
      });
    else if (allowed < 1)
      problems.push({
        where: label,
        path: budget.spec.maxUnavailable !== undefined ? "/spec/maxUnavailable" : "/spec/minAvailable",
        message: `allows no disruption at the minimum scale of ${names} (${replicas} replica${replicas === 1 ? "" : "s"}): a node drain would wait forever; use maxUnavailable: 1`,
      });
  }
  return problems;
}
