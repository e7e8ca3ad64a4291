/**
 * The real attestations-api (services/attestations-api: its migrations, read model and HTTP app) on
 * 127.0.0.1, filled through its own event appliers with the records a test needs.
 */
import {
  applyAttestationRecorded,
  applyAttestationRevoked,
  applyUniquenessVerified,
  buildApp,
  migrations,
} from "@humanpass/attestations-api";
import { createPool, type Kysely, kyselyOn, migrateToLatest } from "@humanpass/db";
import type { AttestationRevokedData } from "@humanpass/event-bus";
import { DEFAULT_AGENT_OWNERSHIP_SCHEMA } from "@humanpass/human-proof";
import { didFromAddress, iden3IdFromAddress } from "@humanpass/identity";
import pino from "pino";
import { type Address, getAddress, type Hex, keccak256, toHex } from "viem";

const SCHEMA = "attestations";
let sequence = 0;

export interface AttestationsApi {
  /** Base URL of the service, e.g. http://127.0.0.1:1234 (ATTESTATIONS_API_URL). */
  url: string;
  /** Its attestations list endpoint, the `attestationsApiBaseUrl` of Billions' agent client. */
  attestationsUrl: string;
  /** Records `human`'s ownership of the agent and the human's uniqueness proof (nullifier); the attestation id. */
  pairAgent(agent: Address, human: Address, nullifier: string): Promise<Hex>;
  /** Revokes an attestation in the read model; the event the chain-indexer would publish for it. */
  revoke(attestationId: Hex, agent: Address, human: Address): Promise<AttestationRevokedData>;
  /** Records an attestation of another schema about the agent. */
  attest(agent: Address, human: Address, schemaId: string): Promise<Hex>;
  close(): Promise<void>;
}

export async function startAttestationsApi(databaseUrl: string): Promise<AttestationsApi> {
  const pool = createPool({ connectionString: databaseUrl, schema: SCHEMA, max: 4 });
  const db: Kysely<any> = kyselyOn<any>(pool);
  await migrateToLatest(db, { schema: SCHEMA, migrations });
  const app = await buildApp({
    pool,
    logger: pino({ level: "silent" }) as Parameters<typeof buildApp>[0]["logger"],
    rateLimit: false,
  });
  const url = await app.listen({ port: 0, host: "127.0.0.1" });

  async function record(agent: Address, human: Address, schemaId: string): Promise<Hex> {
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
      registry: "0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0",
      chainId: 45056,
      blockNumber: sequence,
      blockHash: keccak256(toHex(`block-${sequence}`)),
      logIndex: 0,
      txHash: keccak256(toHex(`tx-${sequence}`)),
    });
    return attestationId;
  }

  return {
    url,
    attestationsUrl: `${url}/api/v1/attestations`,
    async pairAgent(agent, human, nullifier) {
      const attestationId = await record(agent, human, DEFAULT_AGENT_OWNERSHIP_SCHEMA);
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
    attest: record,
    async revoke(attestationId, agent, human) {
      sequence += 1;
      const data: AttestationRevokedData = {
        attestationId,
        revoker: getAddress(human),
        revokerIden3Id: iden3IdFromAddress(human, "main"),
        recipientDid: didFromAddress(agent, "main"),
        recipientIden3Id: iden3IdFromAddress(agent, "main"),
        revocationTime: Math.floor(Date.now() / 1000),
        registry: "0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0",
        chainId: 45056,
        blockNumber: sequence,
        blockHash: keccak256(toHex(`block-${sequence}`)),
        logIndex: 0,
        txHash: keccak256(toHex(`tx-${sequence}`)),
      };
      await applyAttestationRevoked(db, data);
      return data;
    },
    async close() {
      await app.close();
      await db.destroy();
    },
  };
}
