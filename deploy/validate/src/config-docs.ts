import { hostname } from "node:os";
import { CommonEnv } from "@humanpass/config";
import { ServiceRuntimeEnv } from "@humanpass/service";
import type { TObject, TSchema } from "@sinclair/typebox";
import { REPO_ROOT } from "./paths.ts";
import { serviceConfigs } from "./service-config.ts";

function describeType(schema: Record<string, any>): string {
  if (schema.description) return schema.description;
  if (schema.anyOf)
    return schema.anyOf
      .map((s: any) => (s.const !== undefined ? String(s.const) : describeType(s)))
      .join(", ");
  if (schema.pattern) return `a string matching \`${schema.pattern}\``;
  return schema.type ?? "a string";
}

/** Defaults computed on this machine (paths, host name) are shown by what they mean, not by their value here. */
function describeDefault(schema: Record<string, any>, required: boolean): string {
  if (schema.default === undefined) return required ? "**required**" : "(unset)";
  const value = String(schema.default);
  if (value === hostname()) return "(the host name)";
  if (value.startsWith(REPO_ROOT)) return `\`<repo>${value.slice(REPO_ROOT.length)}\``;
  return value === "" ? '`""`' : `\`${value}\``;
}

function table(schema: TObject): string[] {
  const rows = ["| variable | default | accepted values |", "| - | - | - |"];
  for (const [name, prop] of Object.entries(schema.properties as Record<string, TSchema>)) {
    const escaped = describeType(prop).replace(/\|/g, "\\|").replace(/</g, "&lt;");
    rows.push(
      `| \`${name}\` | ${describeDefault(prop, schema.required?.includes(name) ?? false)} | ${escaped} |`,
    );
  }
  return rows;
}

/** Every service's own variables, read from the TypeBox schema its config.ts exports (`…Env`). */
export async function renderConfigTables(): Promise<string> {
  const out: string[] = ["### Every service", ""];
  out.push(
    ...table({ properties: { ...CommonEnv, ...ServiceRuntimeEnv }, required: [] } as unknown as TObject),
  );
  out.push("");
  for (const { service, exportName, schema } of await serviceConfigs()) {
    out.push(`### ${service}`, "", `From \`services/${service}/src/config.ts\` (\`${exportName}\`).`, "");
    out.push(...table(schema), "");
  }
  return out.join("\n");
}

export const CONFIG_BEGIN =
  "<!-- BEGIN GENERATED CONFIGURATION TABLES: npm run docs -w @humanpass/deploy-validate -->";
export const CONFIG_END = "<!-- END GENERATED CONFIGURATION TABLES -->";

export async function withConfigTables(markdown: string): Promise<string> {
  const start = markdown.indexOf(CONFIG_BEGIN);
  const end = markdown.indexOf(CONFIG_END);
  if (start < 0 || end < start) throw new Error("docs/deploy.md lacks the generated-configuration markers");
  return `${markdown.slice(0, start + CONFIG_BEGIN.length)}\n\n${await renderConfigTables()}\n${markdown.slice(end)}`;
}
