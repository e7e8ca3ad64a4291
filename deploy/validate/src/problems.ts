/** One reason a file is invalid: where (a JSON pointer inside the document) and what. */
export interface Problem {
  /** File or rendered manifest the problem is in, e.g. `docker-compose.yml` or `overlays/dev: Deployment/verifier`. */
  where: string;
  path: string;
  message: string;
}

export function formatProblems(problems: Problem[]): string {
  return problems
    .map((p) => `  ${p.where}${p.path && p.path !== "/" ? ` at ${p.path}` : ""}: ${p.message}`)
    .join("\n");
}
