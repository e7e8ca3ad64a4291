import type { Problem } from "./problems.ts";

type Obj = Record<string, any>;

const WORKLOADS = new Set(["Deployment", "StatefulSet", "Job", "CronJob"]);
/** How long a service's shutdown steps may take after draining (installGracefulShutdown in libs/http). */
const SHUTDOWN_STEPS_SECONDS = 15;
/** SHUTDOWN_DRAIN_MS when no ConfigMap sets it: the services' default (libs/service). */
const DEFAULT_DRAIN_MS = 5_000;

function matches(selector: Obj | undefined, labels: Obj | undefined): boolean {
  const wanted = selector?.matchLabels ?? {};
  return Object.entries(wanted).every(([k, v]) => labels?.[k] === v);
}

/**
 * humanpass's own rules for rendered manifests, beyond what the API accepts: every workload runs non-root on a
 * read-only root filesystem without privileges and with resources; every service Deployment has its probes on
 * /readyz and /healthz, a preStop sleep (so a rollout drops no request: the endpoint goes before the process) and a
 * termination grace period that covers the sleep, SHUTDOWN_DRAIN_MS and the shutdown steps; a stateless one (rolling
 * updates) has a PodDisruptionBudget and an HPA; every pod is covered by a NetworkPolicy of its own; every ConfigMap
 * a pod reads is rendered with it.
 */
export function policyProblems(manifests: unknown[], where: string): Problem[] {
  const problems: Problem[] = [];
  const all = manifests as Obj[];
  const byKind = (kind: string) => all.filter((m) => m?.kind === kind);
  const configMaps = new Set(byKind("ConfigMap").map((m) => m.metadata?.name));
  const configData = new Map(byKind("ConfigMap").map((m) => [m.metadata?.name, m.data ?? {}]));
  const policies = byKind("NetworkPolicy").filter(
    (p) => Object.keys(p.spec?.podSelector?.matchLabels ?? {}).length > 0,
  );
  const pdbs = byKind("PodDisruptionBudget");
  const hpas = byKind("HorizontalPodAutoscaler");

  for (const workload of all.filter((m) => WORKLOADS.has(m?.kind))) {
    const label = `${where}: ${workload.kind}/${workload.metadata?.name}`;
    const add = (path: string, message: string) => problems.push({ where: label, path, message });
    // A CronJob's pods are its job template's.
    const podPath = workload.kind === "CronJob" ? "/spec/jobTemplate/spec/template" : "/spec/template";
    const pod =
      workload.kind === "CronJob" ? workload.spec?.jobTemplate?.spec?.template : workload.spec?.template;
    const podLabels = pod?.metadata?.labels ?? {};
    if (pod?.spec?.securityContext?.runAsNonRoot !== true)
      add(`${podPath}/spec/securityContext/runAsNonRoot`, "must be true");
    const containers: [string, Obj][] = [
      ...(pod?.spec?.initContainers ?? []).map((c: Obj, i: number): [string, Obj] => [
        `initContainers/${i}`,
        c,
      ]),
      ...(pod?.spec?.containers ?? []).map((c: Obj, i: number): [string, Obj] => [`containers/${i}`, c]),
    ];
    for (const [at, c] of containers) {
      const base = `${podPath}/spec/${at}`;
      if (c.securityContext?.readOnlyRootFilesystem !== true)
        add(`${base}/securityContext/readOnlyRootFilesystem`, "must be true");
      if (c.securityContext?.allowPrivilegeEscalation !== false)
        add(`${base}/securityContext/allowPrivilegeEscalation`, "must be false");
      if (!(c.securityContext?.capabilities?.drop ?? []).includes("ALL"))
        add(`${base}/securityContext/capabilities/drop`, 'must include "ALL"');
      if (!c.resources?.requests || !c.resources?.limits)
        add(`${base}/resources`, "requests and limits are required");
      for (const [i, source] of (c.envFrom ?? []).entries()) {
        const name = source.configMapRef?.name;
        if (name && !configMaps.has(name) && source.configMapRef?.optional !== true)
          add(`${base}/envFrom/${i}`, `ConfigMap ${name} is not rendered`);
      }
    }
    for (const [i, volume] of (pod?.spec?.volumes ?? []).entries()) {
      const name = volume.configMap?.name;
      if (name && !configMaps.has(name))
        add(`${podPath}/spec/volumes/${i}`, `ConfigMap ${name} is not rendered`);
    }
    if (!policies.some((p) => matches(p.spec.podSelector, podLabels)))
      add(`${podPath}/metadata/labels`, "no NetworkPolicy selects these pods");

    if (workload.kind === "Deployment" && podLabels["app.kubernetes.io/component"] === "service") {
      const main = pod.spec.containers[0] ?? {};
      if (main.readinessProbe?.httpGet?.path !== "/readyz")
        add("/spec/template/spec/containers/0/readinessProbe", "must be an HTTP GET of /readyz");
      if (main.livenessProbe?.httpGet?.path !== "/healthz")
        add("/spec/template/spec/containers/0/livenessProbe", "must be an HTTP GET of /healthz");
      const sleep = main.lifecycle?.preStop?.sleep?.seconds;
      if (typeof sleep !== "number" || sleep <= 0)
        add(
          "/spec/template/spec/containers/0/lifecycle/preStop",
          "needs a sleep, so a rollout drops no request",
        );
      else {
        const env: Obj = {};
        for (const source of main.envFrom ?? [])
          Object.assign(env, configData.get(source.configMapRef?.name));
        for (const entry of main.env ?? []) if (entry.value !== undefined) env[entry.name] = entry.value;
        const drain = Number(env.SHUTDOWN_DRAIN_MS ?? DEFAULT_DRAIN_MS) / 1000;
        const needed = sleep + drain + SHUTDOWN_STEPS_SECONDS;
        const grace = pod.spec.terminationGracePeriodSeconds ?? 30;
        if (grace < needed)
          add(
            "/spec/template/spec/terminationGracePeriodSeconds",
            `${grace} s is shorter than the preStop sleep (${sleep} s), SHUTDOWN_DRAIN_MS (${drain} s) and the shutdown steps (${SHUTDOWN_STEPS_SECONDS} s): the kubelet would kill the pod mid-request`,
          );
      }
      if ((workload.spec.strategy?.type ?? "RollingUpdate") === "RollingUpdate") {
        if (!pdbs.some((p) => matches(p.spec?.selector, podLabels)))
          add("/", "a stateless service needs a PodDisruptionBudget");
        if (
          !hpas.some(
            (h) =>
              h.spec?.scaleTargetRef?.kind === "Deployment" &&
              h.spec?.scaleTargetRef?.name === workload.metadata.name,
          )
        ) {
          add("/", "a stateless service needs a HorizontalPodAutoscaler");
        }
      }
    }
  }
  return problems;
}
