import {
  type AttestationInput,
  encodeSchemaData,
  getSchema,
  identityFromAddress,
  mine,
  recordAttestations,
  registerSchema,
  revokeAttestations,
} from "@humanpass/devnet";
import { sampleValue } from "@humanpass/testing";
import { type Hex, keccak256, toHex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  eventually,
  expectedRecorded,
  project,
  readAttestations,
  type Stack,
  startStack,
} from "./harness.ts";

const SCHEMAS = [
  { name: "AgentOwnership", schema: "bytes data", revocable: true, values: (_n: number) => ["0x"] },
  {
    name: "Review",
    schema: "uint8 stars,string comment",
    revocable: true,
    values: (n: number) => [n % 6, `review ${n}`],
  },
  {
    name: "Score",
    schema: "uint256 score",
    revocable: true,
    values: (n: number) => [BigInt(n) * 10n ** 20n],
  },
  {
    name: "Tag",
    schema: "string tag,address subject",
    revocable: true,
    values: (n: number) => [`tag-${n}`, address(n)],
  },
  { name: "Badge", schema: "bytes32 badge", revocable: false, values: (n: number) => [keccak256(toHex(n))] },
];
const RECORDS = 10_000;
const REVOCATIONS = 500;

function address(n: number): Hex {
  return `0x${(n + 1).toString(16).padStart(40, "0")}`;
}

let stack: Stack;
let recordedIds: Hex[];
let revokedIds: Hex[];
let schemaIds: Hex[];

beforeAll(async () => {
  stack = await startStack("chain_indexer_backfill");
  const { devnet } = stack;
  schemaIds = [];
  for (const s of SCHEMAS) schemaIds.push((await registerSchema(devnet, s)).id);
  const attesters = devnet.accounts.slice(1, 6).map((a) => identityFromAddress(a.address));
  const inputs: AttestationInput[] = Array.from({ length: RECORDS }, (_, n) => {
    const s = n % SCHEMAS.length;
    return {
      schemaId: schemaIds[s]!,
      // Runs of 100 per attester keep batches full.
      attester: attesters[Math.floor(n / 100) % attesters.length]!,
      recipient: identityFromAddress(address(n)),
      expirationTime: n % 7 === 0 ? 4_000_000_000 + n : 0,
      revocable: n % 3 !== 0,
      refId: n % 11 === 0 ? keccak256(toHex(`ref-${n}`)) : undefined,
      data: encodeSchemaData(SCHEMAS[s]!.schema, SCHEMAS[s]!.values(n)),
    };
  });
  recordedIds = (await recordAttestations(devnet, inputs)).map((r) => r.id);
  // Every 19th record of a revocable schema, spread over the whole range.
  revokedIds = recordedIds.filter((_, n) => n % SCHEMAS.length !== 4 && n % 16 === 1).slice(0, REVOCATIONS);
  await revokeAttestations(devnet, revokedIds);
  await mine(devnet, 1);
}, 300_000);

afterAll(async () => {
  await stack?.close();
});

describe("backfill of 10,000 attestations across 5 schemas with 500 revocations", () => {
  // Hardhat spends about 1 ms of CPU per record written and per record read, on a 2-core machine shared with other suites.
  it(
    "delivers events equal, field by field, to what getAttestation and getSchema return",
    { timeout: 300_000 },
    async () => {
      const { devnet, collector } = stack;
      expect(revokedIds).toHaveLength(REVOCATIONS);
      const { indexer, metrics } = stack.indexer();
      await stack.drain(indexer);
      await eventually(() => collector.unique().length === SCHEMAS.length + RECORDS + REVOCATIONS, 120_000);

      const events = collector.unique();
      expect(events.filter((e) => e.type === "blocks_reverted")).toEqual([]);
      const { attestations, schemas, applied } = project(events);
      expect([...applied.values()].every((count) => count === 1)).toBe(true);
      expect(new Set(attestations.keys())).toEqual(new Set(recordedIds));

      const onChain = await readAttestations(devnet, recordedIds);
      const receipts = new Map<Hex, { blockNumber: number; txHash: Hex }>();
      for (const e of collector.ofType("attestation_recorded")) receipts.set(e.data.attestationId, e.data);
      for (const record of onChain) {
        const projected = attestations.get(record.id);
        expect(projected).toMatchObject({
          ...expectedRecorded(record),
          revocationTime: Number(record.revocationTime),
        });
      }
      // Positions point at the AttestationRecorded log of each record.
      const sample = await devnet.client.getTransactionReceipt({
        hash: receipts.get(recordedIds[4_321]!)!.txHash,
      });
      expect(Number(sample.blockNumber)).toBe(receipts.get(recordedIds[4_321]!)!.blockNumber);

      const revoked = collector.ofType("attestation_revoked");
      expect(new Set(revoked.map((e) => e.data.attestationId))).toEqual(new Set(revokedIds));
      const revokedOnChain = new Map(onChain.map((r) => [r.id, r]));
      for (const e of revoked) {
        const record = revokedOnChain.get(e.data.attestationId)!;
        expect(e.data).toMatchObject({
          revocationTime: Number(record.revocationTime),
          revoker: record.attester.ethereumAddress,
          revokerIden3Id: record.attester.iden3Id.toString(),
          recipientDid: record.recipient.did,
          recipientIden3Id: record.recipient.iden3Id.toString(),
        });
        expect(record.revocationTime).toBeGreaterThan(0n);
      }

      for (const id of schemaIds) {
        const schema = await getSchema(devnet, id);
        expect(schemas.get(id)).toMatchObject({
          schemaId: schema.id,
          name: schema.name,
          schema: schema.schema,
          resolver: schema.resolver,
          revocable: schema.revocable,
        });
      }
      const exposition = await metrics.service.render();
      expect(
        sampleValue(exposition, "humanpass_chain_indexer_records_total", { type: "attestation_recorded" }),
      ).toBe(10000);
      // Every record came from the calldata that recorded it.
      expect(sampleValue(exposition, "humanpass_chain_indexer_record_reads_total")).toBe(0);
    },
  );
});
