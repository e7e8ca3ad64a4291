import { execFileSync } from "node:child_process";
import { parseAllDocuments } from "yaml";

/**
 * Renders a kustomization offline with the kustomize built into kubectl (kubectl ≥ 1.27 embeds kustomize v5;
 * the machine image ships it). KUSTOMIZE=<path to a kustomize binary> uses that instead. No cluster is contacted.
 */
export function renderKustomization(dir: string): string {
  const standalone = process.env.KUSTOMIZE;
  const [command, args] = standalone ? [standalone, ["build", dir]] : ["kubectl", ["kustomize", dir]];
  try {
    return execFileSync(command, args, {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: string };
    if (err.code === "ENOENT") {
      throw new Error(
        `${command} not found: install kubectl (it embeds kustomize) or set KUSTOMIZE to a kustomize binary`,
      );
    }
    throw new Error(`${command} ${args.join(" ")} failed: ${(err.stderr ?? err.message).trim()}`);
  }
}

/**
 * Parses kustomize's output as the API server reads it. kustomize leaves a 40-digit hex string (an EVM address)
 * unquoted; Go's YAML reads it as the string it is (it overflows every integer type), YAML 1.2's core schema as a
 * hex integer: without that tag an address stays the string the service receives.
 */
export function parseManifests(text: string): unknown[] {
  return parseAllDocuments(text, {
    customTags: (tags) => tags.filter((tag) => !(typeof tag === "object" && tag.format === "HEX")),
  })
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`rendered YAML does not parse: ${doc.errors[0]!.message}`);
      return doc.toJS();
    })
    .filter((d) => d !== null && d !== undefined);
}
