import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { composeCommand, NO_COMPOSE_COMMAND } from "./compose-cli.ts";
import { renderOverlay, validateDeploy } from "./deploy.ts";
import { parseManifests } from "./kustomize.ts";
import { REPO_ROOT, repoPath } from "./paths.ts";
import { placeholderProblems } from "./placeholders.ts";

const run = promisify(execFile);
/** A filled values.env for the prod overlay, as make lint renders it. */
const PROD_VALUES = repoPath("deploy/validate/fixtures/prod-values.env");

/** Replaces one exact text in a file of the copy, failing loudly when the text is not there any more. */
function edit(root: string, file: string, from: string, to: string): void {
  const full = path.join(root, file);
  const text = readFileSync(full, "utf8");
  if (!text.includes(from))
    throw new Error(`${file} no longer contains ${JSON.stringify(from)}: update this test`);
  writeFileSync(full, text.replace(from, to));
}

// Each full run (the first three tests) renders both overlays, reads the compose files (and runs compose config where
// a compose command exists) and type-checks every manifest: a minute or more on a busy machine, hence their timeouts.
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
      "customQueriesConfigMap:",
      "customQueriesConfigMaps:",
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
    // Draining: a service without its preStop sleep, one whose grace period ends before its shutdown does.
    edit(
      broken,
      "deploy/k8s/base/webhooks/deployment.yaml",
      "          lifecycle:\n",
      "          x-lifecycle:\n",
    );
    edit(
      broken,
      "deploy/k8s/base/verifier/deployment.yaml",
      "terminationGracePeriodSeconds: 40",
      "terminationGracePeriodSeconds: 20",
    );
    // Gateway API: a path match type of ingress-nginx's, not the Gateway API's; the Barman Cloud ObjectStore: a
    // retention it cannot read.
    edit(
      broken,
      "deploy/k8s/base/gateway/routes.yaml",
      "type: PathPrefix\n            value: /api/v1",
      "type: Prefix\n            value: /api/v1",
    );
    edit(
      broken,
      "deploy/k8s/overlays/prod/object-store.yaml",
      "retentionPolicy: 30d",
      "retentionPolicy: 30 days",
    );
  });

  afterAll(() => rmSync(broken, { recursive: true, force: true }));

  it("passes the committed docker-compose.yml and every rendered overlay", async () => {
    const { checked, problems, warnings } = await validateDeploy(REPO_ROOT, {
      values: { prod: PROD_VALUES },
    });
    expect(problems).toEqual([]);
    // Compose's own check runs where a compose command exists; elsewhere a warning says it did not.
    const compose = composeCommand();
    const projects = ["docker-compose.yml", "docker-compose.yml + docker-compose.cluster.yml"];
    expect(warnings.filter((w) => w.includes("compose config"))).toEqual(
      compose
        ? []
        : projects.map((p) => `${p}: compose's own check (compose config) not run: ${NO_COMPOSE_COMMAND}`),
    );
    const composeCheck = compose ? `${compose.join(" ")} config` : "no compose command";
    expect(checked).toEqual([
      ...projects.map((p) => `${p} (Compose Specification, in-process; ${composeCheck})`),
      "Dockerfile",
      "deploy/devnet/Dockerfile",
      expect.stringMatching(/^\d+ image, compose and script files \(architectures, apt\/root\)$/),
      "package-lock.json (platform packages, install scripts)",
      "deploy/otel-collector.yaml",
      expect.stringMatching(/^deploy\/k8s\/overlays\/dev \(\d+ manifests\)$/),
      expect.stringMatching(
        /^deploy\/k8s\/overlays\/prod with deploy\/validate\/fixtures\/prod-values\.env \(\d+ manifests\)$/,
      ),
      expect.stringMatching(
        /^deploy\/k8s\/overlays\/prod-restore with deploy\/validate\/fixtures\/prod-values\.env \(\d+ manifests\)$/,
      ),
    ]);
  }, 180_000);

  it("fails a deliberately broken copy, naming each problem, with exit code 1", async () => {
    const result = await run(
      process.execPath,
      [
        "--conditions=@humanpass/source",
        path.join(REPO_ROOT, "deploy/validate/src/main.ts"),
        "--values",
        `prod=${PROD_VALUES}`,
        broken,
      ],
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
    if (composeCommand())
      expect(stderr).toMatch(
        /docker-compose\.yml: docker(-| )compose config: .*services\.agent-auth\.depends_on\.attestations-api\.condition.*service_ready/,
      );
    else
      expect(stderr).toContain(
        `warning: docker-compose.yml: compose's own check (compose config) not run: ${NO_COMPOSE_COMMAND}`,
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
        `deploy/k8s/overlays/${overlay}: Cluster/humanpass-db at /spec/monitoring/customQueriesConfigMaps: unknown or mistyped field`,
      );
    expect(stderr).toContain(
      "deploy/k8s/overlays/prod: ScheduledBackup/humanpass-db-nightly at /spec/backupOwnerReference: must be equal to one of the allowed values",
    );
    for (const overlay of ["dev", "prod"]) {
      expect(stderr).toContain(
        `deploy/k8s/overlays/${overlay}: Deployment/webhooks at /spec/template/spec/containers/0/lifecycle/preStop: needs a sleep`,
      );
      expect(stderr).toContain(
        `deploy/k8s/overlays/${overlay}: Deployment/verifier at /spec/template/spec/terminationGracePeriodSeconds: 20 s is shorter than the preStop sleep (10 s), SHUTDOWN_DRAIN_MS (5 s) and the shutdown steps (15 s)`,
      );
      expect(stderr).toContain(
        `deploy/k8s/overlays/${overlay}: HTTPRoute/attestations-api at /spec/rules/0/matches/0/path/type: must be equal to one of the allowed values`,
      );
    }
    expect(stderr).toContain(
      "deploy/k8s/overlays/prod: ObjectStore/humanpass-backups at /spec/retentionPolicy: must match",
    );
  }, 180_000);

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
      const { problems } = await validateDeploy(root, { values: { prod: PROD_VALUES } });
      // prod-restore is built on prod, so it fails with it.
      expect(problems).toEqual(
        ["deploy/k8s/overlays/prod", "deploy/k8s/overlays/prod-restore"].map((where) =>
          expect.objectContaining({ where, message: expect.stringContaining("scheduled-backups.yaml") }),
        ),
      );
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }, 180_000);

  describe("the prod overlay's values", () => {
    const k8s = repoPath("deploy/k8s");

    it("does not render without a values.env", () => {
      expect(() => renderOverlay(k8s, "prod", undefined)).toThrow(/values\.env.*no such file/);
    });

    it("is refused with the placeholders of values.env.example, each named where it lands", () => {
      const manifests = parseManifests(
        renderOverlay(k8s, "prod", repoPath("deploy/k8s/overlays/prod/values.env.example")),
      );
      const found = placeholderProblems(manifests, "prod").map(
        (p) => `${p.where} at ${p.path}: ${p.message}`,
      );
      for (const expected of [
        /^prod: ConfigMap\/payment-gateway-config-\w+ at \/data\/EVM_ADDRESS: the zero address/,
        /^prod: ConfigMap\/chain-indexer-config-\w+ at \/data\/ATTESTATION_REGISTRY_ADDRESS: the zero address/,
        /^prod: ConfigMap\/chain-indexer-config-\w+ at \/data\/SCHEMA_REGISTRY_ADDRESSES: the zero address/,
        /^prod: ConfigMap\/verifier-config-\w+ at \/data\/AUDIENCE_DID: a placeholder is left/,
        /^prod: ConfigMap\/verifier-config-\w+ at \/data\/ALLOWED_ISSUER: a placeholder is left/,
        /^prod: ConfigMap\/verifier-config-\w+ at \/data\/HOST_URL: a host under \.example/,
        /^prod: Gateway\/humanpass at \/spec\/gatewayClassName: a placeholder is left/,
        /^prod: HTTPRoute\/payment-gateway at \/spec\/hostnames\/0: a host under \.example/,
        /^prod: Deployment\/verifier at \/spec\/template\/spec\/containers\/0\/image: a placeholder is left/,
        /^prod: ObjectStore\/humanpass-backups at \/spec\/configuration\/destinationPath: a placeholder is left/,
      ])
        expect(found).toContainEqual(expect.stringMatching(expected));
    });

    it("is refused when one of our images is pinned by a tag alone", () => {
      const dir = mkdtempSync(path.join(tmpdir(), "humanpass-values-"));
      try {
        const values = path.join(dir, "values.env");
        writeFileSync(
          values,
          readFileSync(PROD_VALUES, "utf8").replace(
            /^IMAGE_WEBHOOKS=.*$/m,
            "IMAGE_WEBHOOKS=registry.humanpass.test/humanpass/webhooks:1.0.0",
          ),
        );
        const manifests = parseManifests(renderOverlay(k8s, "prod", values));
        expect(placeholderProblems(manifests, "prod")).toEqual([
          expect.objectContaining({
            where: "prod: Deployment/webhooks",
            path: "/spec/template/spec/containers/0/image",
            message: "not pinned by digest: registry.humanpass.test/humanpass/webhooks:1.0.0",
          }),
          expect.objectContaining({
            where: "prod: CronJob/humanpass-dead-letters",
            path: "/spec/jobTemplate/spec/template/spec/containers/0/image",
          }),
          expect.objectContaining({
            where: "prod: Job/humanpass-migrate-1.0.0",
            path: "/spec/template/spec/initContainers/7/image",
          }),
        ]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it("is refused when the NATS image is pinned by a tag alone", () => {
      const copy = mkdtempSync(path.join(tmpdir(), "humanpass-k8s-"));
      try {
        cpSync(k8s, copy, { recursive: true });
        edit(copy, "overlays/prod/kustomization.yaml", "    digest: sha256:", "    # digest: sha256:");
        const manifests = parseManifests(renderOverlay(copy, "prod", PROD_VALUES));
        expect(placeholderProblems(manifests, "prod")).toEqual([
          expect.objectContaining({
            where: "prod: StatefulSet/nats",
            path: "/spec/template/spec/containers/0/image",
            message: "not pinned by digest: nats:2.10.8-alpine",
          }),
        ]);
      } finally {
        rmSync(copy, { recursive: true, force: true });
      }
    });

    it("passes filled in, and names the migrations Job after the release", () => {
      const manifests = parseManifests(renderOverlay(k8s, "prod", PROD_VALUES)) as {
        kind: string;
        metadata: { name: string };
      }[];
      expect(placeholderProblems(manifests, "prod")).toEqual([]);
      expect(manifests.filter((m) => m.kind === "Job").map((m) => m.metadata.name)).toEqual([
        "humanpass-migrate-1.0.0",
      ]);
      // The values are copied into place, not applied as they are (the migration Job's check reads its own copy).
      expect(manifests.some((m) => m.metadata.name === "humanpass-values")).toBe(false);
    });
  });
});
