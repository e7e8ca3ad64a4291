import { describe, expect, it } from "vitest";
import { parseManifests, renderKustomization } from "./kustomize.ts";
import { repoPath } from "./paths.ts";
import { policyProblems } from "./policy.ts";

type Obj = Record<string, any>;

describe("policyProblems", () => {
  const rendered = () => parseManifests(renderKustomization(repoPath("deploy/k8s/overlays/dev"))) as Obj[];
  const find = (ms: Obj[], kind: string, name: string) =>
    ms.find((m) => m.kind === kind && m.metadata.name === name)!;

  it("finds nothing to object to in the committed overlay", () => {
    expect(policyProblems(rendered(), "dev")).toEqual([]);
  });

  it("names each broken rule", () => {
    const ms = rendered().filter(
      (m) =>
        !(m.kind === "PodDisruptionBudget" && m.metadata.name === "agent-auth") &&
        !(m.kind === "HorizontalPodAutoscaler" && m.metadata.name === "verifier") &&
        !(m.kind === "NetworkPolicy" && m.metadata.name === "nats") &&
        !(m.kind === "NetworkPolicy" && m.metadata.name === "humanpass-maintenance"),
    );
    find(ms, "Deployment", "attestations-api").spec.template.spec.containers[0].readinessProbe.httpGet.path =
      "/healthz";
    find(ms, "StatefulSet", "nats").spec.template.spec.containers[0].securityContext.readOnlyRootFilesystem =
      false;
    delete find(ms, "Job", "humanpass-migrate").spec.template.spec.initContainers[1].resources;
    find(ms, "Deployment", "payment-gateway").spec.template.spec.securityContext.runAsNonRoot = false;
    find(
      ms,
      "CronJob",
      "attestations-api-reindex",
    ).spec.jobTemplate.spec.template.spec.containers[0].securityContext.allowPrivilegeEscalation = true;

    expect(
      policyProblems(ms, "dev")
        .map((p) => `${p.where} ${p.path}: ${p.message}`)
        .sort(),
    ).toEqual([
      "dev: CronJob/attestations-api-reindex /spec/jobTemplate/spec/template/metadata/labels: no NetworkPolicy selects these pods",
      "dev: CronJob/attestations-api-reindex /spec/jobTemplate/spec/template/spec/containers/0/securityContext/allowPrivilegeEscalation: must be false",
      "dev: CronJob/humanpass-dead-letters /spec/jobTemplate/spec/template/metadata/labels: no NetworkPolicy selects these pods",
      "dev: Deployment/agent-auth /: a stateless service needs a PodDisruptionBudget",
      "dev: Deployment/attestations-api /spec/template/spec/containers/0/readinessProbe: must be an HTTP GET of /readyz",
      "dev: Deployment/payment-gateway /spec/template/spec/securityContext/runAsNonRoot: must be true",
      "dev: Deployment/verifier /: a stateless service needs a HorizontalPodAutoscaler",
      "dev: Job/humanpass-migrate /spec/template/spec/initContainers/1/resources: requests and limits are required",
      "dev: StatefulSet/nats /spec/template/metadata/labels: no NetworkPolicy selects these pods",
      "dev: StatefulSet/nats /spec/template/spec/containers/0/securityContext/readOnlyRootFilesystem: must be true",
    ]);
  });
});
