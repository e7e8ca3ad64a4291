import type { Problem } from "./problems.ts";

/** The variables a Compose file is interpolated with (what compose would find in its environment). */
export type ComposeVariables = Record<string, string | undefined>;

const NAME = /^[_a-zA-Z][_a-zA-Z0-9]*/;
const BRACED = /^([_a-zA-Z][_a-zA-Z0-9]*)(?:(:?[-?+])([\s\S]*))?$/;

class InterpolationError extends Error {}

/** The index of the `}` closing a `${` whose body starts at `from`, nested `${…}` skipped; -1 when unclosed. */
function closingBrace(text: string, from: number): number {
  let depth = 1;
  for (let i = from; i < text.length; i++) {
    if (text[i] === "$" && (text[i + 1] === "$" || text[i + 1] === "{")) {
      if (text[i + 1] === "{") depth++;
      i++;
    } else if (text[i] === "}" && --depth === 0) return i;
  }
  return -1;
}

/**
 * Interpolates one string as the Compose Specification defines it: `$$` is a `$`; `$VAR` and `${VAR}` the value
 * (blank when unset, reported through `unset`); `${VAR:-default}` / `${VAR-default}` the default when unset or
 * empty / unset; `${VAR:?message}` / `${VAR?message}` an error then; `${VAR:+other}` / `${VAR+other}` the other
 * text when set and not empty / set. Defaults and other texts are interpolated themselves.
 */
export function interpolate(
  text: string,
  variables: ComposeVariables,
  unset: (name: string) => void,
): string {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const dollar = text.indexOf("$", i);
    if (dollar < 0) return out + text.slice(i);
    out += text.slice(i, dollar);
    const next = text[dollar + 1];
    if (next === "$") {
      out += "$";
      i = dollar + 2;
    } else if (next === "{") {
      const end = closingBrace(text, dollar + 2);
      if (end < 0)
        throw new InterpolationError(`invalid interpolation: no closing } in ${JSON.stringify(text)}`);
      out += substitute(text.slice(dollar + 2, end), variables, unset);
      i = end + 1;
    } else {
      const name = NAME.exec(text.slice(dollar + 1))?.[0];
      if (!name)
        throw new InterpolationError(
          `invalid interpolation in ${JSON.stringify(text)}: a $ that starts no variable (write $$ for a $)`,
        );
      out += lookup(name, variables, unset);
      i = dollar + 1 + name.length;
    }
  }
  return out;
}

function lookup(name: string, variables: ComposeVariables, unset: (name: string) => void): string {
  const value = variables[name];
  if (value === undefined) unset(name);
  return value ?? "";
}

function substitute(body: string, variables: ComposeVariables, unset: (name: string) => void): string {
  const match = BRACED.exec(body);
  if (!match) throw new InterpolationError(`invalid interpolation: \${${body}}`);
  const [, name, operator, rest = ""] = match as unknown as [string, string, string | undefined, string];
  const value = variables[name];
  const empty = operator?.startsWith(":") ? !value : value === undefined;
  switch (operator) {
    case undefined:
      return lookup(name, variables, unset);
    case ":-":
    case "-":
      return empty ? interpolate(rest, variables, unset) : value!;
    case ":?":
    case "?":
      if (empty)
        throw new InterpolationError(
          `required variable ${name} is missing a value${rest ? `: ${interpolate(rest, variables, unset)}` : ""}`,
        );
      return value!;
    default:
      return empty ? "" : interpolate(rest, variables, unset);
  }
}

/**
 * Interpolates every string value of a parsed Compose file (keys stay as written, as compose leaves them). A
 * string that cannot be interpolated is a problem at its path and stays as written; an unset variable without a
 * default is a warning, as compose warns of it.
 */
export function interpolateDocument(
  document: unknown,
  variables: ComposeVariables,
  where: string,
): { document: unknown; problems: Problem[]; warnings: string[] } {
  const problems: Problem[] = [];
  const unsetNames = new Set<string>();
  const walk = (node: unknown, path: string): unknown => {
    if (typeof node === "string") {
      try {
        return interpolate(node, variables, (name) => unsetNames.add(name));
      } catch (e) {
        if (!(e instanceof InterpolationError)) throw e;
        problems.push({ where, path: path || "/", message: e.message });
        return node;
      }
    }
    if (Array.isArray(node)) return node.map((item, i) => walk(item, `${path}/${i}`));
    if (node && typeof node === "object")
      return Object.fromEntries(
        Object.entries(node).map(([key, value]) => [key, walk(value, `${path}/${pointerEscape(key)}`)]),
      );
    return node;
  };
  const interpolated = walk(document, "");
  const warnings = [...unsetNames].map(
    (name) => `${where}: the ${name} variable is not set and has no default: a blank string is used`,
  );
  return { document: interpolated, problems, warnings };
}

/** A key as a JSON pointer segment (RFC 6901), as ajv writes instance paths. */
function pointerEscape(key: string): string {
  return key.replace(/~/g, "~0").replace(/\//g, "~1");
}
