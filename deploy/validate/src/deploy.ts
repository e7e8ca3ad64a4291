import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { validateCompose } from "./compose";
import { validateManifests } from "./k8s";
import { parseManifests, renderKustomization } from "./kustomize";
import type { Problem } from "./problems";

export interface DeployValidation {
  checked: string[];
  problems: Problem[];
}

/** Validates `<root>/docker-compose.yml` and every `<root>/deploy/k8s/overlays/*` as rendered by kustomize. */
export async function validateDeploy(root: string): Promise<DeployValidation> {
  const checked: string[] = [];
  const problems: Problem[] = [];
  const composeFile = path.join(root, "docker-compose.yml");
  problems.push(...validateCompose(readFileSync(composeFile, "utf8")));
  checked.push("docker-compose.yml");

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
    try {
      const manifests = parseManifests(renderKustomization(path.join(overlaysDir, overlay)));
      sets.push({ where, manifests });
      checked.push(`${where} (${manifests.length} manifests)`);
    } catch (e) {
      problems.push({ where, path: "/", message: (e as Error).message });
    }
  }
  problems.push(...(await validateManifests(sets)));
  return { checked, problems };
}
