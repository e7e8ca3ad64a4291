import { read, type Statement } from "./read.ts";
import type { AttestationListRow, Queryable, SchemaInfo, StoredAttestation } from "./types.ts";

interface Snapshot {
  version: bigint;
  schemas: Map<string, SchemaInfo>;
}

/** Every schema with its place, numbered in one pass, and the version of `schemas` they are. */
const LOAD: Statement = {
  name: "schema-catalog",
  text: `select v.version, s.id, s.name, s.schema_raw,
  (row_number() over (order by s.block_number, s.log_index, s.id))::text as schema_index
from schemas_version v left join schemas s on true`,
};

/** Selected with a page: the version of `schemas` in the page's own snapshot. */
export const SCHEMAS_VERSION_SQL = "(select version from schemas_version)";

type LoadRow = { version: string; id: string | null; name: string; schema_raw: string; schema_index: string };

/**
 * The schemas, held in memory so that attestation pages need not join them and count each one's place per row:
 * they are few next to attestations and change only when one is registered or a reorg drops one. A page
 * statement also selects `SCHEMAS_VERSION_SQL`; a page read at a version this copy has not reached reloads it
 * first, so a page never shows schema information older than itself.
 */
export class SchemaCatalog {
  private current: Snapshot = { version: -1n, schemas: new Map() };
  private loading: Promise<Snapshot> | undefined;

  private readonly pool: Queryable;

  constructor(pool: Queryable) {
    this.pool = pool;
  }

  /** The schemas as of `version` or later. */
  async at(version: string): Promise<Map<string, SchemaInfo>> {
    const wanted = BigInt(version);
    while (this.current.version < wanted) {
      this.loading ??= this.load().finally(() => {
        this.loading = undefined;
      });
      const loaded = await this.loading;
      if (loaded.version > this.current.version) this.current = loaded;
    }
    return this.current.schemas;
  }

  private async load(): Promise<Snapshot> {
    const rows = await read<LoadRow>(this.pool, LOAD, []);
    const schemas = new Map<string, SchemaInfo>();
    for (const row of rows)
      if (row.id !== null)
        schemas.set(row.id, { name: row.name, raw: row.schema_raw, index: row.schema_index });
    return { version: BigInt(rows[0]!.version), schemas };
  }
}

/**
 * The list row of `row` (an attestation's own columns and maybe more): its list columns and its schema's name,
 * signature and place, null when the schema is not (or not yet) indexed. A new object with the fields spelled out,
 * so the hot list path builds each row in one step.
 */
export function withSchema(row: StoredAttestation, schemas: Map<string, SchemaInfo>): AttestationListRow {
  const schema = schemas.get(row.schema_id);
  return {
    id: row.id,
    schema_id: row.schema_id,
    creation_time: row.creation_time,
    attester_did: row.attester_did,
    attester_iden3_id: row.attester_iden3_id,
    attester_address: row.attester_address,
    recipient_did: row.recipient_did,
    recipient_iden3_id: row.recipient_iden3_id,
    recipient_address: row.recipient_address,
    data: row.data,
    schema_name: schema?.name ?? null,
    schema_raw: schema?.raw ?? null,
    schema_index: schema?.index ?? null,
  };
}
