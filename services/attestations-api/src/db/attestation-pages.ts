import { execute, type NamedStatement, named, type Reader } from "./prepared";
import type {
  AttestationFilter,
  AttestationListRow,
  FilterColumn,
  Page,
  PageRequest,
  StoredAttestation,
} from "./queries";
import { SCHEMAS_VERSION_SQL, type SchemaCatalog, withSchema } from "./schema-catalog";

const FILTER_COLUMNS = new Set<FilterColumn>([
  "schema_id",
  "attester_did",
  "attester_iden3_id",
  "attester_address",
  "recipient_did",
  "recipient_iden3_id",
  "recipient_address",
]);

/** A list item's columns, but those of its schema, which `SchemaCatalog` adds. */
const ITEM_COLUMNS = `a.id, a.schema_id, a.creation_time, a.attester_did, a.attester_iden3_id, a.attester_address,
  a.recipient_did, a.recipient_iden3_id, a.recipient_address, a.data`;

/** The same columns as the outer query passes them on: the chain position orders the page but is not sent. */
const OUTPUT_COLUMNS = `p.id, p.schema_id, p.creation_time, p.attester_did, p.attester_iden3_id, p.attester_address,
  p.recipient_did, p.recipient_iden3_id, p.recipient_address, p.data`;

/** Most requests one statement answers together; larger bursts take several. */
const MAX_BATCH = 64;

/** The two statements of one filter shape: the pages, and the totals of those that need them counted. */
interface Shape {
  page: NamedStatement;
  totals: NamedStatement;
}

const shapes = new Map<string, Shape>();

/**
 * The statements answering many page requests of one filter shape at once: each request is a row of `unnest`
 * (its filter values, limit and offset) joined laterally to its page, or to its totals. `not a.revoked` is a
 * literal so the generic plan of the prepared statement can use the partial indexes.
 */
function shapeOf(filter: AttestationFilter): Shape {
  const columns = filter.conditions.map((c) => c.column);
  const key = `${filter.match}:${columns.join(",")}`;
  let shape = shapes.get(key);
  if (!shape) {
    for (const column of columns)
      if (!FILTER_COLUMNS.has(column)) throw new Error(`not a filter column: ${column}`);
    const matches = columns.map(
      (column, i) => `${column.endsWith("_address") ? `lower(a.${column})` : `a.${column}`} = r.c${i}`,
    );
    const condition =
      matches.length === 0
        ? "not a.revoked"
        : `not a.revoked and (${matches.join(filter.match === "all" ? " and " : " or ")})`;
    const values = columns.map((_, i) => `$${i + 1}::text[]`);
    const names = columns.map((_, i) => `c${i}`);
    // One row past the page tells whether there is more than the page holds.
    const page = named(`select r.ord, ${OUTPUT_COLUMNS}, ${SCHEMAS_VERSION_SQL} as schemas_version
from unnest(${[...values, `$${columns.length + 1}::bigint[]`, `$${columns.length + 2}::bigint[]`].join(", ")}) with ordinality as r(${[...names, "lim", "off", "ord"].join(", ")})
left join lateral (
  select ${ITEM_COLUMNS}, a.block_number, a.log_index
  from attestations a
  where ${condition}
  order by a.block_number, a.log_index, a.id
  limit r.lim + 1 offset r.off
) p on true
order by r.ord, p.block_number, p.log_index, p.id`);
    // The page sizes, unused here, give `unnest` an array to count requests by when the filter has no values.
    const requests = `unnest(${[...values, `$${columns.length + 1}::bigint[]`].join(", ")}) with ordinality as r(${[...names, "lim", "ord"].join(", ")})`;
    const totals = named(
      keptTotals(filter, requests) ??
        `select r.ord, c.total, c.unique_attesters
from ${requests}
cross join lateral (
  select count(*) as total, count(distinct a.attester_did) as unique_attesters from attestations a where ${condition}
) c
order by r.ord`,
    );
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
function keptTotals(filter: AttestationFilter, requests: string): string | null {
  const shape = `${filter.conditions.length > 1 ? filter.match : ""}:${filter.conditions.map((c) => c.column).join(",")}`;
  const fromTotals = (
    scope: string,
  ) => `select r.ord, coalesce(t.listed, 0) as total, coalesce(t.attesters, 0) as unique_attesters
from ${requests}
left join list_totals t on t.scope = ${scope}
order by r.ord`;
  const fromAttesters = (scope: string, attester: string) => `select r.ord, coalesce(l.listed, 0) as total,
  case when l.listed > 0 then 1 else 0 end as unique_attesters
from ${requests}
left join list_attesters l on l.scope = ${scope} and l.attester_did = ${attester}
order by r.ord`;
  if (shape === ":") return fromTotals("''");
  if (shape === ":schema_id") return fromTotals("r.c0");
  if (shape === ":attester_did") return fromAttesters("''", "r.c0");
  if (shape === "all:schema_id,attester_did") return fromAttesters("r.c0", "r.c1");
  return null;
}

interface Pending {
  filter: AttestationFilter;
  page: PageRequest;
  resolve(page: Page<AttestationListRow>): void;
  reject(error: unknown): void;
}

type PageRow = StoredAttestation & { ord: string; schemas_version: string };
type TotalsRow = { ord: string; total: string; unique_attesters: string };

/**
 * Pages of listed attestations, oldest first by chain position, with their totals. Requests that arrive in the
 * same turn of the event loop with the same filter shape are answered together: under load the hot ownership
 * lookup then costs Postgres one round trip per batch instead of one per request. A first page that holds every
 * match (an ownership lookup's one attestation) carries its own totals; the others are counted by a second
 * statement, as counting every match costs as much again as finding the page. New attestations only ever append,
 * so the page boundaries a client walks never move.
 */
export class AttestationPages {
  private pending = new Map<string, Pending[]>();
  private scheduled = false;

  constructor(
    private readonly reader: Reader,
    private readonly schemas: SchemaCatalog,
  ) {}

  page(filter: AttestationFilter, page: PageRequest): Promise<Page<AttestationListRow>> {
    return new Promise((resolve, reject) => {
      const key = shapeOf(filter).page.name;
      const queue = this.pending.get(key);
      if (queue) queue.push({ filter, page, resolve, reject });
      else this.pending.set(key, [{ filter, page, resolve, reject }]);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const taken = this.pending;
    this.pending = new Map();
    for (const queue of taken.values()) {
      for (let i = 0; i < queue.length; i += MAX_BATCH) void this.answer(queue.slice(i, i + MAX_BATCH));
    }
  }

  private async answer(batch: Pending[]): Promise<void> {
    try {
      const shape = shapeOf(batch[0]!.filter);
      const rows = await execute<PageRow>(this.reader, shape.page, [
        ...filterValues(batch),
        batch.map((p) => p.page.size),
        batch.map((p) => (p.page.number - 1) * p.page.size),
      ]);
      // One row per request at least (the lateral join is a left join), so there is always a version to read.
      const schemas = await this.schemas.at(rows[0]!.schemas_version);
      const found: AttestationListRow[][] = batch.map(() => []);
      for (const row of rows) if (row.id !== null) found[Number(row.ord) - 1]!.push(withSchema(row, schemas));
      const pages: Page<AttestationListRow>[] = [];
      const uncounted: number[] = [];
      batch.forEach(({ page }, i) => {
        const matches = found[i]!;
        const complete = page.number === 1 && matches.length <= page.size;
        pages.push({
          total: matches.length,
          unique: new Set(matches.map((m) => m.attester_did)).size,
          rows: complete ? matches : matches.slice(0, page.size),
        });
        if (!complete) uncounted.push(i);
      });
      if (uncounted.length > 0) {
        const counted = uncounted.map((i) => batch[i]!);
        const totals = await execute<TotalsRow>(this.reader, shape.totals, [
          ...filterValues(counted),
          counted.map((p) => p.page.size),
        ]);
        for (const row of totals) {
          const page = pages[uncounted[Number(row.ord) - 1]!]!;
          page.total = Number(row.total);
          page.unique = Number(row.unique_attesters);
        }
      }
      batch.forEach((p, i) => p.resolve(pages[i]!));
    } catch (error) {
      for (const p of batch) p.reject(error);
    }
  }
}

/** Each filter condition's values across the batch, one array per condition. */
function filterValues(batch: Pending[]): string[][] {
  return batch[0]!.filter.conditions.map((_, i) => batch.map((p) => p.filter.conditions[i]!.value));
}
