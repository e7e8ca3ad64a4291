import {
  ABIs,
  type AttestationInput,
  ensureSender,
  identityFromAddress,
  mine,
  recordAttestation,
  recordAttestations,
  registerSchema,
  revokeAttestation,
} from "@humanpass/devnet";
import { sampleValue } from "@humanpass/testing";
import { encodeFunctionData, type Hex, keccak256, parseEventLogs, toHex, zeroAddress } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  eventually,
  expectedRecorded,
  project,
  readAttestations,
  type Stack,
  startStack,
} from "./harness.ts";

/**
 * Records written every way the registry can be reached: straight calls of both entry points, and calls through
 * Multicall3, whose calldata the indexer cannot attribute to a sender, so it reads those with getAttestation.
 */
describe.each([
  { readEveryRecord: false, reads: 2 },
  { readEveryRecord: true, reads: 6 },
])(
  "records recorded directly and through Multicall3 (readEveryRecord $readEveryRecord)",
  ({ readEveryRecord, reads }) => {
    let stack: Stack;
    let ids: Hex[];
    let revoked: Hex[];

    const input = (n: number, overrides: Partial<AttestationInput> = {}): AttestationInput => ({
      schemaId: keccak256(toHex("unset")),
      attester: { ...identityFromAddress(stack.devnet.accounts[1]!.address), ethereumAddress: zeroAddress },
      recipient: identityFromAddress(`0x${(0xca1d00 + n).toString(16).padStart(40, "0")}`),
      data: toHex(`record ${n}`),
      ...overrides,
    });

    /** Sends calls to the attestation registry through Multicall3's aggregate3 in one transaction. */
    async function throughMulticall(callData: Hex[]) {
      const { devnet } = stack;
      const hash = await devnet.client.writeContract({
        address: devnet.addresses.multicall3,
        abi: ABIs.multicall3,
        functionName: "aggregate3",
        args: [
          callData.map((data) => ({
            target: devnet.addresses.attestationRegistry,
            allowFailure: false,
            callData: data,
          })),
        ],
        account: await ensureSender(devnet, devnet.accounts[2]!.address),
      });
      const receipt = await devnet.client.waitForTransactionReceipt({ hash, pollingInterval: 20 });
      expect(receipt.status).toBe("success");
      return receipt;
    }

    beforeAll(async () => {
      stack = await startStack("chain_indexer_calldata");
      const { devnet } = stack;
      const schemaId = (await registerSchema(devnet, { name: "Paths", schema: "bytes data" })).id;
      const direct = await recordAttestation(
        devnet,
        // The registry keeps the low 64 bits of an expiration.
        input(0, { schemaId, expirationTime: 2n ** 64n + 1_700_000_000n, refId: keccak256(toHex("ref")) }),
        { from: devnet.accounts[1]!.address },
      );
      const batch = await recordAttestations(
        devnet,
        [1, 2, 3].map((n) =>
          input(n, {
            schemaId,
            attester: identityFromAddress(devnet.accounts[3]!.address),
            revocable: n !== 2,
            data: n === 3 ? "0x" : toHex(`record ${n}`),
          }),
        ),
      );
      const request = (n: number) => ({
        schemaId,
        attester: { ...identityFromAddress(devnet.accounts[2]!.address), ethereumAddress: zeroAddress },
        recipient: identityFromAddress(`0x${(0xca1d00 + n).toString(16).padStart(40, "0")}`),
        expirationTime: 0n,
        revocable: true,
        refId: keccak256(toHex(`multicall ${n}`)),
        data: toHex(`through multicall ${n}`),
      });
      const viaMulticall = await throughMulticall(
        [4, 5].map((n) =>
          encodeFunctionData({
            abi: ABIs.attestationRegistry,
            functionName: "recordAttestation",
            args: [request(n)],
          }),
        ),
      );
      const multicalled = parseEventLogs({
        abi: ABIs.attestationRegistry,
        logs: viaMulticall.logs,
        eventName: "AttestationRecorded",
      }).map((e) => e.args.id);
      ids = [direct.id, ...batch.map((r) => r.id), ...multicalled];
      // Multicall3 is the attester address of what it recorded, so only it may revoke those.
      await revokeAttestation(devnet, batch[0]!.id);
      await throughMulticall([
        encodeFunctionData({
          abi: ABIs.attestationRegistry,
          functionName: "revokeAttestation",
          args: [multicalled[1]!],
        }),
      ]);
      revoked = [batch[0]!.id, multicalled[1]!];
      await mine(stack.devnet, 1);
    }, 120_000);

    afterAll(async () => {
      await stack?.close();
    });

    it("delivers events equal to getAttestation, reading only what calldata cannot give", async () => {
      const { devnet, collector } = stack;
      const { indexer, metrics } = stack.indexer({ readEveryRecord });
      await stack.drain(indexer);
      await eventually(() => collector.unique().length === 1 + ids.length + revoked.length);

      const { attestations } = project(collector.unique());
      const onChain = await readAttestations(devnet, ids);
      expect(onChain.map((r) => r.attester.ethereumAddress)).toEqual([
        devnet.accounts[1]!.address,
        ...[1, 2, 3].map(() => devnet.accounts[3]!.address),
        devnet.addresses.multicall3,
        devnet.addresses.multicall3,
      ]);
      for (const record of onChain) {
        expect(attestations.get(record.id)).toMatchObject({
          ...expectedRecorded(record),
          revocationTime: Number(record.revocationTime),
        });
      }
      for (const e of collector.ofType("attestation_revoked")) {
        const record = onChain.find((r) => r.id === e.data.attestationId)!;
        expect(e.data.revocationTime).toBe(Number(record.revocationTime));
        expect(record.revocationTime).toBeGreaterThan(0n);
      }
      expect(collector.ofType("attestation_revoked").map((e) => e.data.attestationId)).toEqual(revoked);
      expect(sampleValue(await metrics.service.render(), "humanpass_chain_indexer_record_reads_total")).toBe(
        reads,
      );
    });
  },
);
