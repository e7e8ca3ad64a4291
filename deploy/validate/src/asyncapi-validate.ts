import { DiagnosticSeverity, type Input, Parser } from "@asyncapi/parser";

export interface SchemaProblem {
  /** JSON pointer of what is wrong, e.g. `/operations/publish_x/action`. */
  path: string;
  message: string;
}

export interface ParsedAsyncApi {
  /** Errors and warnings of the official parser; its hints and notes are left out. */
  problems: SchemaProblem[];
  /** The document with every `$ref` resolved in place; undefined when it has errors. */
  resolved?: Record<string, any>;
}

const parser = new Parser();

/**
 * Reads an AsyncAPI document (YAML or JSON text, or an object) with the official @asyncapi/parser: the spec's
 * JSON schema, `$ref` resolution and the parser's own rules (e.g. unique operation ids, channel servers exist).
 */
export async function parseAsyncApi(document: string | object): Promise<ParsedAsyncApi> {
  const { document: parsed, diagnostics } = await parser.parse(document as Input);
  const problems = diagnostics
    .filter((d) => d.severity <= DiagnosticSeverity.Warning)
    .map((d) => ({
      path: `/${d.path.map((p) => String(p).replace(/~/g, "~0").replace(/\//g, "~1")).join("/")}`,
      message: `${d.message} (${d.code})`,
    }));
  return { problems, resolved: parsed?.json() as Record<string, any> | undefined };
}
