// Migration 0006 (identifiers compared byte by byte) on a read model that already holds data: every answer stays
// the same. (That the ownership lookup still reads its index is checked by bench/attestations-api/plans.ts.)
import { createPool, migrateToLatest } from "@humanpass/db";
import type { HttpApp } from "@humanpass/http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../src/app.ts";
import { SCHEMA } from "../src/config.ts";
import { migrations } from "../src/db/migrations/index.ts";
import { readSessionSettings } from "../src/db/session-settings.ts";
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
} from "./support/harness.ts";

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

const answers = async (app: HttpApp) =>
  (await Promise.all(paths.map((path) => getJson(app, api(path))))).map(({ status, body }) => ({
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
    const before = await answers(h.app);
    expect(before.map((r) => r.status)).toEqual(paths.map(() => 200));
    expect(before[0]!.body.totalItems).toBe(1);
    expect(before[6]!.body).toMatchObject({ revoked: true });

    expect(await migrateToLatest(h.db, { schema: SCHEMA, migrations })).toContain(
      "0006_identifier_collation",
    );
    // As a replica started after the migration (a connection that prepared a statement before it fails that
    // statement once: "cached plan must not change result type").
    const pool = createPool({
      connectionString: h.database.url,
      schema: SCHEMA,
      settings: readSessionSettings(),
    });
    const app = await buildApp({ pool, logger, rateLimit: false });
    try {
      expect(await answers(app)).toEqual(before);
      const agent3 = party();
      const own3 = attestationRecorded(ownership.schemaId, human, agent3, { revocable: true });
      await h.publish("CHAIN", "attestation_recorded", own3);
      const { body } = await getJson(
        app,
        api(`/attestations?schemaId=${ownership.schemaId}&recipientEthereumAddress=${agent3.address}`),
      );
      expect(body.data.map((d: { id: string }) => d.id)).toEqual([own3.attestationId]);
      expect((await getJson(app, api(`/schemas/${ownership.schemaId}`))).body.attestationsCount).toBe(2);
    } finally {
      await app.close();
      await pool.end();
    }
  });
});
