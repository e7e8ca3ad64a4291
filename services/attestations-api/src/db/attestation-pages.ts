import type { BatchedReads, BatchedRow } from "./batched-reads.ts";
import { read, type Statement } from "./read.ts";
import { SCHEMAS_VERSION_SQL, type SchemaCatalog, withSchema } from "./schema-catalog.ts";
import type {
  AttestationFilter,
  AttestationListRow,
  FilterColumn,
  Page,
  PageRequest,
  Queryable,
  StoredAttestation,
} from "./types.ts";

/** Each filter column and the short code naming it in statement names (Postgres cuts names at 63 bytes). */
const FILTER_CODES: Record<FilterColumn, string> = {
  schema_id: "s",
  attester_did: "ad",
  attester_iden3_id: "ai",
  attester_address: "aa",
  recipient_did: "rd",
  recipient_iden3_id: "ri",
  recipient_address: "ra",
};

/** A list item's columns, but those of its schema, which `SchemaCatalog` adds. */
const ITEM_COLUMNS = `a.id, a.schema_id, a.creation_time, a.attester_did, a.attester_iden3_id, a.attester_address,
  a.recipient_did, a.recipient_iden3_id, a.recipient_address, a.data`;

/** The same columns as the outer query of a page passes them on: the chain position orders the page but is not sent. */
const OUTPUT_COLUMNS = `p.id, p.schema_id, p.creation_time, p.attester_did, p.attester_iden3_id, p.attester_address,
  p.recipient_did, p.recipient_iden3_id, p.recipient_address, p.data`;

/** The two statements of one filter shape: pages (batched, see `BatchedReads`), and the totals of one filter. */
interface Shape {
  page: Statement;
  totals: Statement;
}

/** The column as a list filter compares it: addresses lower-case, as their index is on `lower(…)`. */
export function matched(column: FilterColumn): string {
  return column.endsWith("_address") ? `lower(a.${column})` : `a.${column}`;
}

const shapes = new Map<string, Shape>();

/**
 * The statements of a filter shape (its match and columns), the filter values their first parameters: as arrays,
 * one element per request, in the batched page statement. `not a.revoked` is a literal so the generic plan of the
 * prepared statement can use the partial indexes.
 */
function shapeOf(filter: AttestationFilter): Shape {
  const columns = filter.conditions.map((c) => c.column);
  const key = `${filter.match}/${columns.map((column) => FILTER_CODES[column]).join(",")}`;
  let shape = shapes.get(key);
  if (!shape) {
    if (columns.some((column) => !(column in FILTER_CODES))) throw new Error(`not a filter column in ${key}`);
    const condition = (value: (i: number) => string) => {
      const matches = columns.map((column, i) => `${matched(column)} = ${value(i)}`);
      return matches.length === 0
        ? "not a.revoked"
        : `not a.revoked and (${matches.join(filter.match === "all" ? " and " : " or ")})`;
    };
    const arrays = [
      ...columns.map((_, i) => `$${i + 1}::text[]`),
      `$${columns.length + 1}::bigint[]`,
      `$${columns.length + 2}::bigint[]`,
    ];
    const names = [...columns.map((_, i) => `c${i}`), "lim", "off", "ord"];
    // A left join, so every request has a row (its `schemas_version`) even when its page is empty.
    const page: Statement = {
      name: `attestation-page/${key}`,
      text: `select r.ord, ${OUTPUT_COLUMNS}, ${SCHEMAS_VERSION_SQL} as schemas_version
from unnest(${arrays.join(", ")}) with ordinality as r(${names.join(", ")})
left join lateral (
  select ${ITEM_COLUMNS}, a.block_number, a.log_index
  from attestations a
  where ${condition((i) => `r.c${i}`)}
  order by a.block_number, a.log_index, a.id
  limit r.lim offset r.off
) p on true
order by r.ord, p.block_number, p.log_index, p.id`,
    };
    const totals: Statement = {
      name: `attestation-totals/${key}`,
      text:
        keptTotals(filter) ??
        `select count(*) as total, count(distinct a.attester_did) as unique_attesters from attestations a where ${condition((i) => `$${i + 1}`)}`,
    };
    shape = { page, totals };
    shapes.set(key, shape);
  }
  return shape;
}

/**
 * The totals statement of the filters whose totals the read model keeps (migration 0005), null for the others,
 * which match few enough to count: all attestations and a schema's (`list_totals`), and an attester DID's, alone or
 * within a schema (`list_attesters`: one attester, so `uniqueItems` is 1 while it has any).
 */
function keptTotals(filter: AttestationFilter): string | null {
  const shape = `${filter.conditions.length > 1 ? filter.match : ""}:${filter.conditions.map((c) => c.column).join(",")}`;
  const fromTotals = (scope: string) =>
    `select coalesce(max(t.listed), 0) as total, coalesce(max(t.attesters), 0) as unique_attesters
from list_totals t where t.scope = ${scope}`;
  const fromAttesters = (scope: string, attester: string) =>
    `select coalesce(max(l.listed), 0) as total, case when max(l.listed) > 0 then 1 else 0 end as unique_attesters
from list_attesters l where l.scope = ${scope} and l.attester_did = ${attester}`;
  if (shape === ":") return fromTotals("''");
  if (shape === ":schema_id") return fromTotals("$1");
  if (shape === ":attester_did") return fromAttesters("''", "$1");
  if (shape === "all:schema_id,attester_did") return fromAttesters("$1", "$2");
  return null;
}

type PageRow = BatchedRow & StoredAttestation & { schemas_version: string };
type TotalsRow = { total: string; unique_attesters: string };

/**
 * One page of listed attestations, oldest first by chain position, with its totals. New attestations only ever
 * append, so the page boundaries a client walks never move. A first page that holds every match (an ownership
 * lookup's one attestation) carries its own totals; the others are counted by a second statement, as counting
 * every match costs as much again as finding the page.
 */
export async function pageOfAttestations(
  pool: Queryable,
  batches: BatchedReads,
  schemas: SchemaCatalog,
  filter: AttestationFilter,
  page: PageRequest,
): Promise<Page<AttestationListRow>> {
  const shape = shapeOf(filter);
  const values = filter.conditions.map((c) => c.value);
  // One row past the page tells whether there is more than the page holds.
  const rows = await batches.read<PageRow>(shape.page, [
    ...values,
    page.size + 1,
    (page.number - 1) * page.size,
  ]);
  const catalog = await schemas.at(rows[0]!.schemas_version);
  const matches = rows.filter((row) => row.id !== null).map((row) => withSchema(row, catalog));
  if (page.number === 1 && matches.length <= page.size)
    return { total: matches.length, unique: new Set(matches.map((m) => m.attester_did)).size, rows: matches };
  const [totals] = await read<TotalsRow>(pool, shape.totals, values);
  return {
    total: Number(totals!.total),
    unique: Number(totals!.unique_attesters),
    rows: matches.slice(0, page.size),
  };
}
