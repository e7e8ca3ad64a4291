import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import type { Problem } from "./problems.ts";

const DOCKERFILE = "Dockerfile";
const DEVNET_DOCKERFILE = "deploy/devnet/Dockerfile";

/**
 * What the one image recipe of the services (the root Dockerfile, `--build-arg SERVICE=…`) must keep: it runs the
 * compiled code with plain node (no tsx at run time), as an unprivileged user, on code owned by root, with a health
 * check and OCI labels; and no service has a Dockerfile of its own that could drift from it. The devnet's image
 * (compose's local chain) runs compiled code the same way: plain node, unprivileged, on code owned by root.
 */
export function imageProblems(root: string): { checked: string[]; problems: Problem[] } {
  const file = path.join(root, DOCKERFILE);
  if (!existsSync(file)) return { checked: [], problems: [] };
  const problems: Problem[] = [];
  const problem = (where: string, at: string, message: string) => problems.push({ where, path: at, message });
  const text = readFileSync(file, "utf8");
  const runtime = text.slice(text.lastIndexOf("\nFROM "));
  if (!/^ARG SERVICE$/m.test(text))
    problem(DOCKERFILE, "ARG SERVICE", "the service to build must be a build argument");
  if (/\btsx\b/.test(runtime.replace(/^#.*$/gm, "")))
    problem(DOCKERFILE, "tsx", "the runtime stage must not install or run tsx");
  if (!/^CMD \["node", "--enable-source-maps", "dist\/service\.js"\]$/m.test(runtime))
    problem(
      DOCKERFILE,
      "CMD",
      'must run the compiled service: ["node", "--enable-source-maps", "dist/service.js"]',
    );
  const copies = [...runtime.matchAll(/^COPY .*$/gm)].map((copy) => copy[0]);
  if (copies.length === 0 || copies.some((copy) => !copy.startsWith("COPY --from=build --chown=root:root ")))
    problem(DOCKERFILE, "COPY", "the code must be copied owned by root:root");
  // The last USER is the one the container runs as (an earlier one may fill the compile cache as that user).
  const user = [...runtime.matchAll(/^USER (\S+)$/gm)].at(-1)?.[1];
  if (!user || /^(root|0)(:|$)/.test(user))
    problem(DOCKERFILE, "USER", "the service must run as an unprivileged user");
  else problems.push(...uidProblems(root, user));
  if (!/^HEALTHCHECK /m.test(runtime)) problem(DOCKERFILE, "HEALTHCHECK", "the image must check its health");
  if (!/^LABEL org\.opencontainers\.image\.title=/m.test(runtime))
    problem(DOCKERFILE, "LABEL", "the image must carry the OCI labels");
  const servicesDir = path.join(root, "services");
  for (const service of existsSync(servicesDir) ? readdirSync(servicesDir).sort() : []) {
    if (existsSync(path.join(servicesDir, service, "Dockerfile")))
      problem(
        `services/${service}/Dockerfile`,
        "Dockerfile",
        `one recipe for every service: use ${DOCKERFILE}`,
      );
  }
  const devnet = devnetImageProblems(root);
  return { checked: [DOCKERFILE, ...devnet.checked], problems: [...problems, ...devnet.problems] };
}

/**
 * Node keys its compile cache by uid, and the image carries one filled as the image's user: compose's `user:` and
 * every Kubernetes `runAsUser` must be that uid, or the services start without it.
 */
function uidProblems(root: string, imageUser: string): Problem[] {
  const problems: Problem[] = [];
  const uid = imageUser.split(":")[0];
  const composeFile = path.join(root, "docker-compose.yml");
  const composeUser = existsSync(composeFile)
    ? /^x-service:[\s\S]*?^\s+user:\s*"?([^":\s]+)/m.exec(readFileSync(composeFile, "utf8"))?.[1]
    : undefined;
  if (composeUser !== undefined && composeUser !== uid)
    problems.push({
      where: "docker-compose.yml",
      path: "x-service/user",
      message: `runs the services as uid ${composeUser}, the image as ${uid} (${DOCKERFILE}): Node's compile cache is per uid`,
    });
  const k8sBase = path.join(root, "deploy/k8s/base");
  // The services' Deployments and the migrations Job, which runs the services' images.
  const manifests = (existsSync(k8sBase) ? readdirSync(k8sBase).sort() : []).flatMap((dir) =>
    ["deployment.yaml", "job.yaml"].map((file) => `deploy/k8s/base/${dir}/${file}`),
  );
  for (const manifest of manifests.filter((file) => existsSync(path.join(root, file)))) {
    for (const match of readFileSync(path.join(root, manifest), "utf8").matchAll(/^\s+runAsUser:\s*(\d+)/gm))
      if (match[1] !== uid)
        problems.push({
          where: manifest,
          path: "runAsUser",
          message: `runs as uid ${match[1]}, the image as ${uid} (${DOCKERFILE}): Node's compile cache is per uid`,
        });
  }
  return problems;
}

function devnetImageProblems(root: string): { checked: string[]; problems: Problem[] } {
  const file = path.join(root, DEVNET_DOCKERFILE);
  if (!existsSync(file)) return { checked: [], problems: [] };
  const problems: Problem[] = [];
  const problem = (at: string, message: string) =>
    problems.push({ where: DEVNET_DOCKERFILE, path: at, message });
  const text = readFileSync(file, "utf8");
  const runtime = text.slice(text.lastIndexOf("\nFROM "));
  if (/\btsx\b/.test(runtime.replace(/^#.*$/gm, "")))
    problem("tsx", "the runtime stage must not install or run tsx");
  if (!/^CMD \["node", "--enable-source-maps", "deploy\/devnet\/dist\/[\w-]+\.js"\]$/m.test(runtime))
    problem(
      "CMD",
      'must run the compiled devnet: ["node", "--enable-source-maps", "deploy/devnet/dist/….js"]',
    );
  if (!/^COPY --from=build --chown=root:root /m.test(runtime))
    problem("COPY", "the code must be owned by root:root");
  const user = /^USER (\S+)$/m.exec(runtime)?.[1];
  if (!user || /^(root|0)(:|$)/.test(user)) problem("USER", "the devnet must run as an unprivileged user");
  return { checked: [DEVNET_DOCKERFILE], problems };
}
