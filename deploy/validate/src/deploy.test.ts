import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { validateDeploy } from "./deploy.ts";
import { REPO_ROOT, repoPath } from "./paths.ts";

const run = promisify(execFile);

/** Replaces one exact text in a file of the copy, failing loudly when the text is not there any more. */
function edit(root: string, file: string, from: string, to: string): void {
  const full = path.join(root, file);
  const text = readFileSync(full, "utf8");
  if (!text.includes(from))
    throw new Error(`${file} no longer contains ${JSON.stringify(from)}: update this test`);
  writeFileSync(full, text.replace(from, to));
}

describe("npm run validate:deploy", () => {
  let broken: string;

  beforeAll(() => {
    broken = mkdtempSync(path.join(tmpdir(), "humanpass-deploy-"));
    cpSync(repoPath("docker-compose.yml"), path.join(broken, "docker-compose.yml"));
    cpSync(repoPath("deploy/k8s"), path.join(broken, "deploy/k8s"), { recursive: true });
    cpSync(repoPath("deploy/otel-collector.yaml"), path.join(broken, "deploy/otel-collector.yaml"));
    // The collector: a pipeline exporting to an exporter that is not defined.
    edit(broken, "deploy/otel-collector.yaml", "exporters: [otlp/jaeger]", "exporters: [otlp/zipkin]");
    // Compose: a depends_on condition the spec does not have.
    edit(
      broken,
      "docker-compose.yml",
      "      attestations-api:\n        condition: service_healthy",
      "      attestations-api:\n        condition: service_ready",
    );
    // Kubernetes: a port that is not a number, a misspelt probe, a Postgres cluster of "three" instances, an API
    // version that does not exist.
    edit(
      broken,
      "deploy/k8s/base/verifier/deployment.yaml",
      "containerPort: 8080",
      'containerPort: "eighty"',
    );
    edit(broken, "deploy/k8s/base/agent-auth/deployment.yaml", "readinessProbe:", "readinesProbe:");
    edit(broken, "deploy/k8s/base/postgres/cluster.yaml", "instances: 3", "instances: three");
    // CloudNativePG: a field its Cluster CRD does not define, and a ScheduledBackup owner it does not know.
    edit(
      broken,
      "deploy/k8s/base/postgres/cluster.yaml",
      "enablePodMonitor: true",
      "enablePodMonitors: true",
    );
    edit(
      broken,
      "deploy/k8s/overlays/prod/scheduled-backup.yaml",
      "backupOwnerReference: self",
      "backupOwnerReference: owner",
    );
    edit(
      broken,
      "deploy/k8s/base/attestations-api/pdb.yaml",
      "apiVersion: policy/v1",
      "apiVersion: policy/v2",
    );
  });

  afterAll(() => rmSync(broken, { recursive: true, force: true }));

  it("passes the committed docker-compose.yml and every rendered overlay", async () => {
    const { checked, problems } = await validateDeploy(REPO_ROOT);
    expect(problems).toEqual([]);
    expect(checked).toEqual([
      expect.stringMatching(/^docker-compose\.yml \(docker(-| )compose config\)$/),
      "Dockerfile",
      "deploy/devnet/Dockerfile",
      "deploy/otel-collector.yaml",
      expect.stringMatching(/^deploy\/k8s\/overlays\/dev \(\d+ manifests\)$/),
      expect.stringMatching(/^deploy\/k8s\/overlays\/prod \(\d+ manifests\)$/),
    ]);
  });

  it("fails a deliberately broken copy, naming each problem, with exit code 1", async () => {
    const result = await run(
      process.execPath,
      ["--conditions=@humanpass/source", path.join(REPO_ROOT, "deploy/validate/src/main.ts"), broken],
      {
        cwd: REPO_ROOT,
      },
    ).then(
      () => ({ code: 0, stderr: "" }),
      (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
    );
    expect(result.code).toBe(1);
    const { stderr } = result;
    expect(stderr).toContain(
      "docker-compose.yml at /services/agent-auth/depends_on/attestations-api/condition: must be equal to one of the allowed values",
    );
    expect(stderr).toMatch(
      /docker-compose\.yml: docker(-| )compose config: .*services\.agent-auth\.depends_on\.attestations-api\.condition.*service_ready/,
    );
    for (const overlay of ["dev", "prod"]) {
      expect(stderr).toContain(
        `deploy/k8s/overlays/${overlay}: Deployment/verifier at /spec/template/spec/containers/0/ports/0/containerPort: must be integer`,
      );
      expect(stderr).toContain(
        `deploy/k8s/overlays/${overlay}: Deployment/agent-auth at /spec/template/spec/containers/0/readinesProbe: unknown or mistyped field`,
      );
      expect(stderr).toContain(
        `deploy/k8s/overlays/${overlay}: PodDisruptionBudget/attestations-api: no schema for policy/v2 PodDisruptionBudget`,
      );
    }
    // The dev overlay patches the instance count to 1, so only prod keeps the broken value.
    expect(stderr).toContain(
      "deploy/k8s/overlays/prod: Cluster/humanpass-db at /spec/instances: must be integer",
    );
    expect(stderr).not.toContain("deploy/k8s/overlays/dev: Cluster/humanpass-db at /spec/instances");
    for (const overlay of ["dev", "prod"])
      expect(stderr).toContain(
        `deploy/k8s/overlays/${overlay}: Cluster/humanpass-db at /spec/monitoring/enablePodMonitors: unknown or mistyped field`,
      );
    expect(stderr).toContain(
      "deploy/k8s/overlays/prod: ScheduledBackup/humanpass-db-nightly at /spec/backupOwnerReference: must be equal to one of the allowed values",
    );
  });

  it("fails an overlay that kustomize cannot render", async () => {
    const root = mkdtempSync(path.join(tmpdir(), "humanpass-deploy-"));
    try {
      cpSync(repoPath("docker-compose.yml"), path.join(root, "docker-compose.yml"));
      cpSync(repoPath("deploy/k8s"), path.join(root, "deploy/k8s"), { recursive: true });
      edit(
        root,
        "deploy/k8s/overlays/prod/kustomization.yaml",
        "  - scheduled-backup.yaml",
        "  - scheduled-backups.yaml",
      );
      const { problems } = await validateDeploy(root);
      expect(problems).toEqual([
        expect.objectContaining({
          where: "deploy/k8s/overlays/prod",
          message: expect.stringContaining("scheduled-backups.yaml"),
        }),
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
