import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { imageProblems } from "./images.ts";
import { REPO_ROOT, repoPath } from "./paths.ts";

describe("service images", () => {
  const copies: string[] = [];
  afterAll(() => {
    for (const dir of copies) rmSync(dir, { recursive: true, force: true });
  });

  it("the one Dockerfile runs the compiled service with node, unprivileged, on code owned by root", () => {
    const { checked, problems } = imageProblems(REPO_ROOT);
    expect(checked).toEqual(["Dockerfile", "deploy/devnet/Dockerfile"]);
    expect(problems).toEqual([]);
  });

  it("names each drift: tsx at run time, code owned by node, root user, no health check, a service's own Dockerfile, a devnet from sources", () => {
    const root = mkdtempSync(path.join(tmpdir(), "humanpass-images-"));
    copies.push(root);
    const text = readFileSync(repoPath("Dockerfile"), "utf8");
    writeFileSync(
      path.join(root, "Dockerfile"),
      text
        .replace('CMD ["node", "--enable-source-maps", "dist/service.js"]', 'CMD ["tsx", "src/main.ts"]')
        .replace("--chown=root:root", "--chown=node:node")
        .replace(/^USER .*$/gm, "USER root")
        .replace(/^HEALTHCHECK /m, "# HEALTHCHECK "),
    );
    mkdirSync(path.join(root, "services/verifier"), { recursive: true });
    cpSync(repoPath("Dockerfile"), path.join(root, "services/verifier/Dockerfile"));
    mkdirSync(path.join(root, "deploy/devnet"), { recursive: true });
    writeFileSync(
      path.join(root, "deploy/devnet/Dockerfile"),
      readFileSync(repoPath("deploy/devnet/Dockerfile"), "utf8")
        .replace(
          'CMD ["node", "--enable-source-maps", "deploy/devnet/dist/serve.js"]',
          'CMD ["node", "--import", "tsx", "deploy/devnet/serve.ts"]',
        )
        .replace("--chown=root:root", "--chown=node:node"),
    );
    const { problems } = imageProblems(root);
    expect(problems.map((p) => `${p.where} ${p.path}`)).toEqual([
      "Dockerfile tsx",
      "Dockerfile CMD",
      "Dockerfile COPY",
      "Dockerfile USER",
      "Dockerfile HEALTHCHECK",
      "services/verifier/Dockerfile Dockerfile",
      "deploy/devnet/Dockerfile tsx",
      "deploy/devnet/Dockerfile CMD",
      "deploy/devnet/Dockerfile COPY",
    ]);
  });

  it("names a uid of compose or Kubernetes that is not the image's (the compile cache is per uid)", () => {
    const root = mkdtempSync(path.join(tmpdir(), "humanpass-images-"));
    copies.push(root);
    cpSync(repoPath("Dockerfile"), path.join(root, "Dockerfile"));
    writeFileSync(
      path.join(root, "docker-compose.yml"),
      readFileSync(repoPath("docker-compose.yml"), "utf8").replace(
        /^(x-service:[\s\S]*?user: )"[^"]*"/m,
        '$1"1000:1000"',
      ),
    );
    mkdirSync(path.join(root, "deploy/k8s/base/verifier"), { recursive: true });
    writeFileSync(
      path.join(root, "deploy/k8s/base/verifier/deployment.yaml"),
      readFileSync(repoPath("deploy/k8s/base/verifier/deployment.yaml"), "utf8").replace(
        /runAsUser: \d+/,
        "runAsUser: 1000",
      ),
    );
    const { problems } = imageProblems(root);
    expect(problems.map((p) => `${p.where} ${p.path}`)).toEqual([
      "docker-compose.yml x-service/user",
      "deploy/k8s/base/verifier/deployment.yaml runAsUser",
    ]);
  });
});
