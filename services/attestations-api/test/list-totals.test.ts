import { sql } from "@humanpass/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyAttestationRecorded, applyAttestationRevoked } from "../src/events/apply.ts";
import {
  api,
  attestationRecorded,
  attestationRevoked,
  blocksReverted,
  CHAIN_ID,
  getJson,
  type Harness,
  nextPosition,
  party,
  schemaRegistered,
  startHarness,
} from "./support/harness.ts";

let h: Harness;

beforeAll(async () => {
  h = await startHarness("att_list_totals");
});
afterAll(async () => {
  await h?.close();
});

describe("list totals kept by the read model", () => {
  it("keeps the totals of all attestations and of each schema as records, revocations, redeliveries and reverts change them", async () => {
    const s = schemaRegistered();
    await h.publish("CHAIN", "schema_registered", s);
    const [alice, bob] = [party(), party()];
    const a1 = attestationRecorded(s.schemaId, alice, party());
    const a2 = attestationRecorded(s.schemaId, alice, party());
    const b1 = attestationRecorded(s.schemaId, bob, party());
    for (const a of [a1, a2, b1]) await h.publish("CHAIN", "attestation_recorded", a);
    await h.publish("CHAIN", "attestation_recorded", a1); // a redelivery under a new event id
    const secondPage = async () =>
      (await getJson(h.app, api(`/attestations?schemaId=${s.schemaId}&page_size=1&page_number=2`))).body;
    expect(await secondPage()).toMatchObject({ totalItems: 3, uniqueItems: 2, totalPages: 3, nextPage: 3 });

    await h.publish("CHAIN", "attestation_revoked", attestationRevoked(b1.attestationId, party()));
    expect(await secondPage()).toMatchObject({ totalItems: 2, uniqueItems: 1, nextPage: null });

    const forkBlock = nextPosition().blockNumber + 1;
    const orphan = attestationRecorded(s.schemaId, bob, party());
    expect(orphan.blockNumber).toBeGreaterThanOrEqual(forkBlock);
    await h.publish("CHAIN", "attestation_recorded", orphan);
    expect(await secondPage()).toMatchObject({ totalItems: 3, uniqueItems: 2 });
    await h.publish("CHAIN", "blocks_reverted", blocksReverted(forkBlock, { chainId: CHAIN_ID }));
    expect(await secondPage()).toMatchObject({ totalItems: 2, uniqueItems: 1 });
    expect((await getJson(h.app, api(`/schemas/${s.schemaId}`))).body.attestationsCount).toBe(2);
    const byAttester = async (who: typeof alice, schema = "") =>
      (await getJson(h.app, api(`/attestations?attesterDid=${who.did}${schema}&page_size=1&page_number=2`)))
        .body;
    expect(await byAttester(alice)).toMatchObject({ totalItems: 2, uniqueItems: 1, nextPage: null });
    expect(await byAttester(alice, `&schemaId=${s.schemaId}`)).toMatchObject({
      totalItems: 2,
      uniqueItems: 1,
    });
    expect(await byAttester(bob)).toMatchObject({ totalItems: 0, uniqueItems: 0, data: [] });

    const kept = await keptTotals();
    expect(kept).toEqual([
      { scope: "", listed: "2", attesters: "1" },
      { scope: s.schemaId.toLowerCase(), listed: "2", attesters: "1" },
    ]);
    expect(kept).toEqual(await countedTotals());
    const negative = await sql`select 1 from list_attesters where listed < 0`.execute(h.db);
    expect(negative.rows).toEqual([]);
  });

  it("keeps the totals right when many transactions write attestations at once", async () => {
    const schemas = [schemaRegistered(), schemaRegistered()];
    for (const s of schemas) await h.publish("CHAIN", "schema_registered", s);
    const attesters = [party(), party(), party()];
    const records = Array.from({ length: 36 }, (_, i) =>
      attestationRecorded(schemas[i % 2]!.schemaId, attesters[i % 3]!, party()),
    );
    // Straight into the read model, bypassing the one-at-a-time consumer: each its own transaction, in parallel,
    // and a revocation or a revert racing with them.
    await Promise.all(
      records.map((a, i) =>
        h.db.transaction().execute(async (trx) => {
          await applyAttestationRecorded(trx, a, `e${i}`);
          if (i % 4 === 0)
            await applyAttestationRevoked(trx, attestationRevoked(a.attestationId, party()), `r${i}`);
        }),
      ),
    );
    await Promise.all(
      records
        .filter((_, i) => i % 5 === 0)
        .map((a) => sql`delete from attestations where id = ${a.attestationId.toLowerCase()}`.execute(h.db)),
    );
    const [kept, counted] = await Promise.all([keptTotals(), countedTotals()]);
    expect(kept).toEqual(counted);
    const first = counted.find((t) => t.scope === schemas[0]!.schemaId.toLowerCase());
    expect(first).toEqual({ scope: schemas[0]!.schemaId.toLowerCase(), listed: "7", attesters: "3" });
  });
});

type Totals = { scope: string; listed: string; attesters: string };

async function keptTotals(): Promise<Totals[]> {
  const { rows } = await sql<Totals>`
    select scope, listed, attesters from list_totals where listed <> 0 or attesters <> 0
    order by scope collate "C"`.execute(h.db);
  return rows;
}

/** The totals as counting every listed attestation finds them. */
async function countedTotals(): Promise<Totals[]> {
  const { rows } = await sql<Totals>`
    select scope, count(*) as listed, count(distinct attester_did) as attesters from (
      select '' as scope, attester_did from attestations where not revoked
      union all select schema_id, attester_did from attestations where not revoked
    ) l group by scope order by scope collate "C"`.execute(h.db);
  return rows;
}
