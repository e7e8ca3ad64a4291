import { createRequire } from "node:module";
import { Ajv, type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";

const require = createRequire(import.meta.url);

export interface SchemaProblem {
  path: string;
  message: string;
}

/** Validates a parsed AsyncAPI 3.0 document against the official JSON schema shipped in @asyncapi/specs. */
let compiled: ValidateFunction | undefined;

export function validateAsyncApi(document: unknown): SchemaProblem[] {
  if (!compiled) {
    const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false });
    (addFormats as unknown as (a: Ajv) => void)(ajv);
    compiled = ajv.compile(require("@asyncapi/specs/schemas/3.0.0-without-$id.json"));
  }
  const validate = compiled;
  if (validate(document)) return [];
  return (validate.errors ?? []).map((e) => ({
    path: e.instancePath || "/",
    message: `${e.message ?? e.keyword} ${JSON.stringify(e.params)}`,
  }));
}
