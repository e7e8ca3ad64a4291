// Migration 0006 (identifiers compared byte by byte) on a read model that already holds data: every answer stays
// the same, and the ownership lookup still reads its index.
import { migrateToLatest } from "@humanpass/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../src/app";
import { SCHEMA } from "../src/config";
import { migrations } from "../src/db/migrations";
import { createReadPool } from "../src/db/read-pool";
import {
  api,
  attestationRecorded,
  attestationRevoked,
  getJson,
  type Harness,
  logger,
  party,
  schemaRegistered,
  startHarness,
  uniquenessVerified,
} from "./harness";

const BEFORE = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < "0006"));

let h: Harness;
const human = party();
const [agent1, agent2] = [party(), party()];
const ownership = schemaRegistered({ name: "AgentOwnership", schema: "bytes data", revocable: true });
const own1 = attestationRecorded(ownership.schemaId, human, agent1, { revocable: true });
const own2 = attestationRecorded(ownership.schemaId, human, agent2, { revocable: true });
const revocation = attestationRevoked(own2.attestationId, agent2);

const paths = [
  `/attestations?schemaId=${ownership.schemaId}&recipientEthereumAddress=${agent1.address}`,
  `/attestations?schemaId=${ownership.schemaId.toUpperCase().replace("0X", "0x")}&recipientEthereumAddress=${agent1.address.toLowerCase()}`,
  `/attestations?schemaId=${ownership.schemaId}&recipientDid=${agent1.did}`,
  `/attestations?attesterIden3Id=${human.iden3Id}`,
  `/attestations?attesterDid=${human.did}&page_size=1&page_number=2`,
  `/attestations/${own1.attestationId}`,
  `/attestations/${own2.attestationId}`,
  `/identities/${human.did}/attestations`,
  `/identities/${agent1.address}/attestations`,
  `/schemas`,
  `/schemas/${ownership.schemaId}`,
  `/search/${agent1.did}`,
  `/search/${own1.attestationId}`,
  `/nullifier?userId=${human.iden3Id}`,
];

const answers = async () =>
  (await Promise.all(paths.map((path) => getJson(h.app, api(path))))).map(({ status, body }) => ({
    status,
    body,
  }));

beforeAll(async () => {
  h = await startHarness("att_collation", {}, BEFORE);
  const published = [
    await h.publishOnly("CHAIN", "schema_registered", ownership),
    await h.publishOnly("CHAIN", "attestation_recorded", own1),
    await h.publishOnly("CHAIN", "attestation_recorded", own2),
    await h.publishOnly("CHAIN", "attestation_revoked", revocation),
    await h.publishOnly("VERIFIER", "uniqueness_verified", uniquenessVerified(human.iden3Id, "42")),
  ];
  await h.waitApplied(published);
});

afterAll(async () => {
  await h?.close();
});

describe("migration 0006 on a read model that holds data", () => {
  it("leaves every answer as it was, and events applied afterwards are served alike", async () => {
    const before = await answers();
    expect(before.map((r) => r.status)).toEqual(paths.map(() => 200));
    expect(before[0]!.body.totalItems).toBe(1);
    expect(before[6]!.body).toMatchObject({ revoked: true });

    expect(await migrateToLatest(h.db, { schema: SCHEMA, migrations })).toContain(
      "0006_identifier_collation",
    );
    expect(await answers()).toEqual(before);

    const agent3 = party();
    const own3 = attestationRecorded(ownership.schemaId, human, agent3, { revocable: true });
    await h.publish("CHAIN", "attestation_recorded", own3);
    const { body } = await getJson(
      h.app,
      api(`/attestations?schemaId=${ownership.schemaId}&recipientEthereumAddress=${agent3.address}`),
    );
    expect(body.data.map((d: { id: string }) => d.id)).toEqual([own3.attestationId]);
    expect((await getJson(h.app, api(`/schemas/${ownership.schemaId}`))).body.attestationsCount).toBe(2);
  });

  it("the ownership lookup's statement reads its index on the byte-ordered columns", async () => {
    // Already applied by the test above; applied here too so that this test holds when run alone.
    await migrateToLatest(h.db, { schema: SCHEMA, migrations });
    // One connection, so the statement the app prepared and the EXPLAIN run in the same session.
    const pool = createReadPool({ connectionString: h.database.url, max: 1 });
    const app = await buildApp({ db: h.db, pool, logger, rateLimit: false });
    try {
      // With sequential scans priced out (before the statement is planned), a plan that still scans the table
      // means the index cannot serve the comparison: a collation mismatch between the statement and the index
      // would do that.
      await pool.query("set enable_seqscan = off");
      const lookup = `/attestations?schemaId=${ownership.schemaId}&recipientEthereumAddress=${agent1.address}`;
      expect((await getJson(app, api(lookup))).body.totalItems).toBe(1);
      const { rows } = await pool.query<{ name: string }>(
        "select name from pg_prepared_statements where statement like '%lower(a.recipient_address) = r.c1%'",
      );
      expect(rows).toHaveLength(1);
      // EXPLAIN EXECUTE takes no bound parameters; both values are hex checked by the schemas above.
      const { rows: plan } = await pool.query<{ "QUERY PLAN": string }>(
        `explain execute ${rows[0]!.name}(array['${ownership.schemaId}'], array['${agent1.address.toLowerCase()}'], array[10]::bigint[], array[0]::bigint[])`,
      );
      const text = plan.map((r) => r["QUERY PLAN"]).join("\n");
      expect(text).toContain("attestations_schema_recipient_address");
      expect(text).not.toContain("Seq Scan on attestations");
    } finally {
      await app.close();
      await pool.end();
    }
  });
});
