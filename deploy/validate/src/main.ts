import { validateDeploy } from "./deploy.ts";
import { REPO_ROOT } from "./paths.ts";
import { formatProblems } from "./problems.ts";

/** `npm run validate:deploy`: offline checks of docker-compose.yml and the Kubernetes overlays; exit 1 on a problem. */
const root = process.argv[2] ?? REPO_ROOT;
const { checked, problems, warnings } = await validateDeploy(root);
for (const warning of warnings) process.stderr.write(`warning: ${warning}\n`);
if (problems.length > 0) {
  process.stderr.write(
    `deploy validation failed (${problems.length} problem${problems.length === 1 ? "" : "s"}):\n${formatProblems(problems)}\n`,
  );
  process.exitCode = 1;
} else {
  process.stdout.write(`deploy validation passed: ${checked.join(", ")}\n`);
}
