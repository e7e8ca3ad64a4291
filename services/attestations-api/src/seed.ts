import type { Kysely } from "@humanpass/db";
import type { AttestationRevokedData } from "@humanpass/event-bus";
import { didFromAddress, iden3IdFromAddress } from "@humanpass/identity";
import { type Address, getAddress, type Hex, keccak256, toHex } from "viem";
import {
  applyAttestationRecorded,
  applyAttestationRevoked,
  applyUniquenessVerified,
} from "./events/apply.ts";

/** The registry and chain the seeded records claim to come from (the devnet's). */
const REGISTRY = "0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0";
const CHAIN_ID = 45056;

export interface ReadModelSeeder {
  /** Records `human`'s ownership of `agent` and the human's uniqueness proof (`nullifier`); the attestation id. */
  pairAgent(agent: Address, human: Address, nullifier: string): Promise<Hex>;
  /** Records an attestation of `schemaId` by `human` about `agent`; its id. */
  attest(agent: Address, human: Address, schemaId: string): Promise<Hex>;
  /** Revokes an attestation; the event the chain-indexer would have published for it. */
  revoke(attestationId: Hex, agent: Address, human: Address): Promise<AttestationRevokedData>;
}

/**
 * Fills the read model through the service's own event appliers, as the chain-indexer's and the verifier's events
 * would, with no chain behind it: for the tests and benchmarks of the services that read the API. Each record gets
 * a block of its own.
 */
export function createReadModelSeeder(
  db: Kysely<any>,
  options: { ownershipSchema: string },
): ReadModelSeeder {
  let sequence = 0;
  const origin = (n: number) => ({
    registry: REGISTRY,
    chainId: CHAIN_ID,
    blockNumber: n,
    blockHash: keccak256(toHex(`block-${n}`)),
    logIndex: 0,
    txHash: keccak256(toHex(`tx-${n}`)),
  });
  const attest = async (agent: Address, human: Address, schemaId: string): Promise<Hex> => {
    sequence += 1;
    const attestationId = keccak256(toHex(`attestation-${sequence}-${agent}-${schemaId}`));
    await applyAttestationRecorded(db, {
      attestationId,
      schemaId,
      creationTime: Math.floor(Date.now() / 1000) - 60 + sequence,
      expirationTime: 0,
      revocationTime: 0,
      attesterDid: didFromAddress(human, "main"),
      attesterIden3Id: iden3IdFromAddress(human, "main"),
      attesterEthereumAddress: getAddress(human),
      recipientDid: didFromAddress(agent, "main"),
      recipientIden3Id: iden3IdFromAddress(agent, "main"),
      recipientEthereumAddress: getAddress(agent),
      revocable: true,
      refId: `0x${"00".repeat(32)}`,
      data: "0x",
      ...origin(sequence),
    });
    return attestationId;
  };
  return {
    attest,
    async pairAgent(agent, human, nullifier) {
      const attestationId = await attest(agent, human, options.ownershipSchema);
      await applyUniquenessVerified(db, {
        sessionId: sequence,
        nullifier,
        nullifierSessionId: "1",
        userDid: didFromAddress(human, "main"),
        userId: iden3IdFromAddress(human, "main"),
        verifiedAt: new Date().toISOString(),
      });
      return attestationId;
    },
    async revoke(attestationId, agent, human) {
      sequence += 1;
      const data: AttestationRevokedData = {
        attestationId,
        revoker: getAddress(human),
        revokerIden3Id: iden3IdFromAddress(human, "main"),
        recipientDid: didFromAddress(agent, "main"),
        recipientIden3Id: iden3IdFromAddress(agent, "main"),
        revocationTime: Math.floor(Date.now() / 1000),
        ...origin(sequence),
      };
      await applyAttestationRevoked(db, data);
      return data;
    },
  };
}
