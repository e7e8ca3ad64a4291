import { placeholderIn } from "@humanpass/config";
import type { Problem } from "./problems.ts";

type Obj = Record<string, any>;

const DIGEST = /@sha256:[0-9a-f]{64}$/;

function* strings(value: unknown, pointer: string): Generator<[string, string]> {
  if (typeof value === "string") yield [pointer, value];
  else if (Array.isArray(value)) for (const [i, v] of value.entries()) yield* strings(v, `${pointer}/${i}`);
  else if (value && typeof value === "object")
    for (const [k, v] of Object.entries(value))
      yield* strings(v, `${pointer}/${k.replaceAll("~", "~0").replaceAll("/", "~1")}`);
}

/**
 * A production overlay (its manifests labelled `humanpass.dev/environment: prod`) may not carry what only stands in
 * for a deployment's own values: a `replace-with-…` marker, the zero address, a host under .example, or an image,
 * ours or a third party's (NATS), by a tag alone (a tag can be pushed again; a digest names one image).
 */
export function placeholderProblems(manifests: unknown[], where: string): Problem[] {
  const all = manifests as Obj[];
  if (!all.some((m) => m?.metadata?.labels?.["humanpass.dev/environment"] === "prod")) return [];
  const problems: Problem[] = [];
  for (const m of all) {
    const label = `${where}: ${m?.kind}/${m?.metadata?.name}`;
    for (const [pointer, text] of strings(m, "")) {
      const placeholder = placeholderIn(text);
      if (placeholder) problems.push({ where: label, path: pointer, message: `${placeholder}: ${text}` });
      else if (/[cC]ontainers\/\d+\/image$/.test(pointer) && !DIGEST.test(text))
        problems.push({ where: label, path: pointer, message: `not pinned by digest: ${text}` });
    }
  }
  return problems;
}
