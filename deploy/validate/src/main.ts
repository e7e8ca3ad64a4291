import path from "node:path";
import { parseArgs } from "node:util";
import { validateDeploy } from "./deploy.ts";
import { REPO_ROOT } from "./paths.ts";
import { formatProblems } from "./problems.ts";

/**
 * `npm run validate:deploy`: offline checks of docker-compose.yml and the Kubernetes overlays; exit 1 on a problem.
 * `--values <overlay>=<file>` renders that overlay with the file as its values.env (make lint gives prod the filled
 * test fixture; a deployer gives it their own); without it an overlay renders as it lies in the tree.
 */
const { values: flags, positionals } = parseArgs({
  options: { values: { type: "string", multiple: true } },
  allowPositionals: true,
});
const root = positionals[0] ?? REPO_ROOT;
const values: Record<string, string> = {};
for (const entry of flags.values ?? []) {
  const [overlay, file] = entry.split("=", 2);
  if (!overlay || !file) throw new Error(`--values ${entry}: expected <overlay>=<file>`);
  values[overlay] = path.resolve(file);
}
const { checked, problems, warnings } = await validateDeploy(root, { values });
for (const warning of warnings) process.stderr.write(`warning: ${warning}\n`);
if (problems.length > 0) {
  process.stderr.write(
    `deploy validation failed (${problems.length} problem${problems.length === 1 ? "" : "s"}):\n${formatProblems(problems)}\n`,
  );
  process.exitCode = 1;
} else {
  process.stdout.write(`deploy validation passed: ${checked.join(", ")}\n`);
}
