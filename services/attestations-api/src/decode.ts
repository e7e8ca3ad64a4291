import { type AbiParameter, decodeAbiParameters, type Hex, parseAbiParameter } from "viem";

export interface SchemaField {
  name: string;
  type: string;
}

export interface DecodedField {
  name: string;
  type: string;
  signature: string;
  value: { name: string; type: string; value: string };
}

const fieldsCache = new Map<string, SchemaField[]>();
const FIELDS_CACHE_LIMIT = 10_000;

/**
 * Reads a schema signature of the form `<type> <name>,<type> <name>` (tuple types in parentheses allowed).
 * Anything that is not a well-formed field is skipped: a schema written by hand on chain must not break the API.
 */
export function schemaFields(schemaRaw: string): SchemaField[] {
  const cached = fieldsCache.get(schemaRaw);
  if (cached) return cached;
  const fields: SchemaField[] = [];
  for (const part of splitTopLevel(schemaRaw)) {
    const trimmed = part.trim();
    const match = /^(.+?)\s+([A-Za-z_$][A-Za-z0-9_$]*)$/.exec(trimmed);
    if (match) fields.push({ type: match[1].replace(/\s+/g, " ").trim(), name: match[2] });
    else if (/^[a-z0-9\][()]+$/.test(trimmed)) fields.push({ type: trimmed, name: "" });
  }
  if (fieldsCache.size >= FIELDS_CACHE_LIMIT) fieldsCache.clear();
  fieldsCache.set(schemaRaw, fields);
  return fields;
}

const abiCache = new Map<string, AbiParameter[]>();

/** viem's reading of each field (it knows tuples and arrays); the plain `{ type, name }` when it cannot read one. */
function abiParameters(schemaRaw: string, fields: SchemaField[]): AbiParameter[] {
  const cached = abiCache.get(schemaRaw);
  if (cached) return cached;
  const params = fields.map((f) => {
    try {
      return parseAbiParameter(`${f.type} ${f.name}`.trim()) as AbiParameter;
    } catch {
      return { type: f.type, name: f.name } as AbiParameter;
    }
  });
  if (abiCache.size >= FIELDS_CACHE_LIMIT) abiCache.clear();
  abiCache.set(schemaRaw, params);
  return params;
}

function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === "(") depth++;
    else if (ch === ")") depth--;
    else if (ch === "," && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.filter((p) => p.trim().length > 0);
}

/** Every decoded value as a string: integers in decimal, bytes and addresses as hex, arrays and tuples as JSON of strings. */
function stringify(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "bigint" || typeof value === "number" || typeof value === "boolean")
    return String(value);
  // Nested values follow the same rule, so an array of integers reads the same whatever the integer width.
  return JSON.stringify(value, (_key, v) =>
    typeof v === "bigint" || typeof v === "number" || typeof v === "boolean" ? String(v) : v,
  );
}

/**
 * The attestation data decoded with the schema's signature, as spec 2's `decodedDataJson` array. Data that does
 * not decode with that signature yields an empty array rather than an error: `rawData` still carries it.
 */
export function decodeAttestationData(schemaRaw: string | null, data: string): DecodedField[] {
  if (!schemaRaw) return [];
  const fields = schemaFields(schemaRaw);
  if (fields.length === 0) return [];
  let values: readonly unknown[];
  try {
    values = decodeAbiParameters(abiParameters(schemaRaw, fields), data as Hex);
  } catch {
    return [];
  }
  return fields.map((field, i) => ({
    name: field.name,
    type: field.type,
    signature: `${field.type} ${field.name}`.trim(),
    value: { name: field.name, type: field.type, value: stringify(values[i]) },
  }));
}

const jsonCache = new Map<string, string>();
const JSON_CACHE_LIMIT = 10_000;
const CACHEABLE_DATA_LENGTH = 2_048;

/**
 * `decodedDataJson` of spec 2. Short data is remembered per (signature, data): most attestations of a schema carry
 * the same few payloads (every ownership attestation holds empty bytes), so most items cost a map lookup.
 */
export function decodedDataJson(schemaRaw: string | null, data: string): string {
  if (data.length > CACHEABLE_DATA_LENGTH) return JSON.stringify(decodeAttestationData(schemaRaw, data));
  const key = `${schemaRaw ?? ""}\u0000${data}`;
  let json = jsonCache.get(key);
  if (json === undefined) {
    json = JSON.stringify(decodeAttestationData(schemaRaw, data));
    if (jsonCache.size >= JSON_CACHE_LIMIT) jsonCache.clear();
    jsonCache.set(key, json);
  }
  return json;
}
