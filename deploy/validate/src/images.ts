import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import type { Problem } from "./problems";

/**
 * What every service image must agree on, since the five Dockerfiles are written separately: the tsx that runs
 * the code is the one package-lock.json pins (the one the tests ran with), and the code is owned by root while
 * the process runs as `node`, so a compromised service cannot rewrite itself.
 */
export function imageProblems(root: string): { checked: string[]; problems: Problem[] } {
  const servicesDir = path.join(root, "services");
  if (!existsSync(servicesDir)) return { checked: [], problems: [] };
  const lock = JSON.parse(readFileSync(path.join(root, "package-lock.json"), "utf8")) as {
    packages: Record<string, { version?: string }>;
  };
  const tsx = lock.packages["node_modules/tsx"]?.version;
  const checked: string[] = [];
  const problems: Problem[] = [];
  for (const service of readdirSync(servicesDir).sort()) {
    const where = `services/${service}/Dockerfile`;
    const file = path.join(servicesDir, service, "Dockerfile");
    if (!existsSync(file)) continue;
    const text = readFileSync(file, "utf8");
    checked.push(where);
    const pinned = /npm install --global[^\n]*\btsx@(\S+)/.exec(text)?.[1];
    if (pinned !== tsx)
      problems.push({
        where,
        path: "tsx",
        message: `installs tsx@${pinned ?? "(none)"}, package-lock.json has tsx@${tsx}`,
      });
    if (!/^COPY --from=build --chown=root:root \/app \/app$/m.test(text))
      problems.push({ where, path: "COPY /app", message: "the code must be copied owned by root:root" });
    if (!/^USER node$/m.test(text))
      problems.push({ where, path: "USER", message: "the service must run as the unprivileged node user" });
  }
  return { checked, problems };
}
