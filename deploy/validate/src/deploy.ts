import { copyFileSync, cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { loadCompose, readComposeFiles } from "./compose.ts";
import { composeConfig } from "./compose-cli.ts";
import { connectionBudgetProblems } from "./connection-budget.ts";
import { disruptionBudgetProblems } from "./disruption-budget.ts";
import { checkComposeEnv, checkManifestEnv } from "./envcheck.ts";
import { imageProblems } from "./images.ts";
import { validateManifests } from "./k8s.ts";
import { parseManifests, renderKustomization } from "./kustomize.ts";
import { natsTlsProblems } from "./nats-tls.ts";
import { validateOtelConfig } from "./otel.ts";
import { repoPath } from "./paths.ts";
import { placeholderProblems } from "./placeholders.ts";
import { platformProblems } from "./platforms.ts";
import { policyProblems } from "./policy.ts";
import { postgresClusterProblems } from "./postgres-cluster.ts";
import type { Problem } from "./problems.ts";
import { publicRouteProblems } from "./public-routes.ts";
import { serviceConfigs } from "./service-config.ts";

export interface DeployValidation {
  checked: string[];
  problems: Problem[];
  /** Worth knowing, not wrong in the files themselves (e.g. an image whose Dockerfile is not written yet). */
  warnings: string[];
}

export interface DeployOptions {
  /**
   * A values.env by overlay name, rendered in the overlay's place as a deployer's own would be (in a copy of
   * deploy/k8s; the file is never written into the checkout).
   */
  values?: Record<string, string>;
}

/**
 * Overlays built on another that read its values.env (prod-restore is the prod overlay with its Postgres cluster
 * restored from the backups): rendered with that overlay's values.
 */
const VALUES_OF: Record<string, string> = { "prod-restore": "prod" };

/** Renders an overlay, from a copy holding `valuesFile` as its values.env when one is given. */
export function renderOverlay(k8sDir: string, overlay: string, valuesFile: string | undefined): string {
  if (!valuesFile) return renderKustomization(path.join(k8sDir, "overlays", overlay));
  const copy = mkdtempSync(path.join(tmpdir(), "humanpass-k8s-"));
  try {
    cpSync(k8sDir, copy, { recursive: true });
    copyFileSync(valuesFile, path.join(copy, "overlays", VALUES_OF[overlay] ?? overlay, "values.env"));
    return renderKustomization(path.join(copy, "overlays", overlay));
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}

/** What `npm run validate:deploy` (make lint) renders an overlay with: prod with a filled test values.env. */
export const LINT_VALUES: Record<string, string> = {
  prod: repoPath("deploy/validate/fixtures/prod-values.env"),
  "prod-restore": repoPath("deploy/validate/fixtures/prod-values.env"),
};

/** An overlay of the checkout as make lint renders it. */
export function renderForLint(overlay: string): string {
  return renderOverlay(repoPath("deploy/k8s"), overlay, LINT_VALUES[overlay]);
}

/** The Compose projects of the checkout: docker-compose.yml alone, and with docker-compose.cluster.yml on top. */
function composeProjects(root: string): string[][] {
  const projects = [["docker-compose.yml"]];
  if (existsSync(path.join(root, "docker-compose.cluster.yml")))
    projects.push(["docker-compose.yml", "docker-compose.cluster.yml"]);
  return projects;
}

/**
 * Validates `<root>/docker-compose.yml` (alone and with `docker-compose.cluster.yml` over it, where that exists),
 * the services' Dockerfile and every `<root>/deploy/k8s/overlays/*` as rendered by kustomize.
 */
export async function validateDeploy(root: string, options: DeployOptions = {}): Promise<DeployValidation> {
  const checked: string[] = [];
  const problems: Problem[] = [];
  const warnings: string[] = [];
  const configs = await serviceConfigs();
  const composeText = readFileSync(path.join(root, "docker-compose.yml"), "utf8");
  for (const project of composeProjects(root)) {
    const names = project.join(" + ");
    const model = loadCompose(readComposeFiles(root, project));
    problems.push(...model.problems);
    warnings.push(...model.warnings);
    if (model.resolved) checkComposeEnv(model.resolved, configs, problems, warnings, names);
    const compose = composeConfig(project.map((file) => path.join(root, file)));
    if ("notRun" in compose)
      warnings.push(`${names}: compose's own check (compose config) not run: ${compose.notRun}`);
    else problems.push(...compose.problems);
    const byCompose = "notRun" in compose ? "no compose command" : `${compose.command} config`;
    checked.push(`${names} (Compose Specification, in-process; ${byCompose})`);
    // The cluster file adds to a valid base; checked on a broken one it would repeat the base's problems.
    if (model.problems.length) break;
  }
  for (const dockerfile of composeText.matchAll(/^\s+dockerfile:\s*(\S+)\s*$/gm)) {
    if (!existsSync(path.join(root, dockerfile[1]!)))
      warnings.push(`docker-compose.yml builds from ${dockerfile[1]}, which does not exist yet`);
  }
  const images = imageProblems(root);
  checked.push(...images.checked);
  problems.push(...images.problems);
  const platforms = platformProblems(root);
  checked.push(...platforms.checked);
  problems.push(...platforms.problems);
  const otelFile = path.join(root, "deploy/otel-collector.yaml");
  if (existsSync(otelFile)) {
    problems.push(...validateOtelConfig(readFileSync(otelFile, "utf8")));
    checked.push("deploy/otel-collector.yaml");
  }

  const overlaysDir = path.join(root, "deploy/k8s/overlays");
  const overlays = existsSync(overlaysDir)
    ? readdirSync(overlaysDir).filter((d) => existsSync(path.join(overlaysDir, d, "kustomization.yaml")))
    : [];
  if (overlays.length === 0)
    problems.push({
      where: "deploy/k8s/overlays",
      path: "/",
      message: "no overlay with a kustomization.yaml",
    });
  const sets: { where: string; manifests: unknown[] }[] = [];
  for (const overlay of overlays.sort()) {
    const where = `deploy/k8s/overlays/${overlay}`;
    const valuesFile = options.values?.[overlay] ?? options.values?.[VALUES_OF[overlay] ?? ""];
    try {
      const manifests = parseManifests(renderOverlay(path.join(root, "deploy/k8s"), overlay, valuesFile));
      sets.push({ where, manifests });
      problems.push(...placeholderProblems(manifests, where));
      problems.push(...policyProblems(manifests, where));
      problems.push(...connectionBudgetProblems(manifests, where));
      problems.push(...disruptionBudgetProblems(manifests, where));
      problems.push(...publicRouteProblems(manifests, where));
      problems.push(...natsTlsProblems(manifests, where));
      problems.push(...postgresClusterProblems(manifests, where));
      checkManifestEnv(manifests, where, configs, problems, warnings);
      const using = valuesFile ? ` with ${path.relative(root, valuesFile) || valuesFile}` : "";
      checked.push(`${where}${using} (${manifests.length} manifests)`);
    } catch (e) {
      problems.push({ where, path: "/", message: (e as Error).message });
    }
  }
  problems.push(...(await validateManifests(sets)));
  return { checked, problems, warnings };
}
