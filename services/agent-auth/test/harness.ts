import type { HumanLookup } from "@humanpass/attestations-client";
import { createPool, type Kysely, kyselyOn, migrateToLatest, type Pool } from "@humanpass/db";
import type { Topology } from "@humanpass/event-bus";
import type { HttpApp } from "@humanpass/http";
import {
  type ChallengeNonces,
  type HumanProofChallenge,
  signHumanProofChallengeEVMUnchecked,
} from "@humanpass/human-proof";
import { PostgresUsedNonceStore } from "@humanpass/human-proof/postgres";
import type { ServiceMetrics } from "@humanpass/telemetry";
import { createTestDatabase, type TestDatabase, testTopology } from "@humanpass/testing";
import pino from "pino";
import type { LocalAccount } from "viem";
import {
  type AgentAuthDb,
  buildApp,
  type Clock,
  migrations,
  type PublicTerms,
  publicTerms,
  SCHEMA,
} from "../src/index.ts";

export const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" });

/** The public terms the tests' service runs with: not the address it listens on, on purpose. */
export function testTerms(ownershipSchema = `0x${"ca".repeat(32)}`): PublicTerms {
  return publicTerms({
    PUBLIC_URL: "https://agents.example.test",
    CHAIN_ID: 45056,
    CHALLENGE_STATEMENT: "Prove a human stands behind you.",
    OWNERSHIP_SCHEMA_ID: ownershipSchema,
  });
}

export interface TestDb {
  database: TestDatabase;
  db: Kysely<AgentAuthDb>;
  /** The pool under `db`, as the service's own. */
  pool: Pool;
}

export async function setUpDatabase(label: string): Promise<TestDb> {
  const database = await createTestDatabase(label);
  const pool = createPool({ connectionString: database.url, schema: SCHEMA, max: 10 });
  const db = kyselyOn<AgentAuthDb>(pool);
  await migrateToLatest(db, { schema: SCHEMA, migrations });
  return { database, db, pool };
}

export interface RunningAgentAuth {
  app: HttpApp;
  url: string;
  close(): Promise<void>;
}

/** The service's HTTP app on a free port, over the given database and resolver. */
export async function startAgentAuth(options: {
  db: Kysely<AgentAuthDb>;
  pool: Pool;
  resolver: HumanLookup;
  terms: PublicTerms;
  challengeNonces?: ChallengeNonces;
  topology?: Topology;
  clock?: Clock;
  oneClaimPerHuman?: boolean;
  metrics?: ServiceMetrics;
}): Promise<RunningAgentAuth> {
  const app = await buildApp({
    logger,
    db: options.db,
    usedNonces: new PostgresUsedNonceStore(options.pool),
    challengeNonces: options.challengeNonces,
    topology: options.topology ?? testTopology(),
    terms: options.terms,
    resolver: options.resolver,
    clock: options.clock,
    oneClaimPerHuman: options.oneClaimPerHuman ?? false,
    rateLimit: false,
    metrics: options.metrics,
  });
  const address = await app.listen({ port: 0, host: "127.0.0.1" });
  return { app, url: address, close: () => app.close() };
}

export type Reply = { status: number; body: any };

async function reply(response: Response): Promise<Reply> {
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** The SDK's signer shape (`signMessage(text)`) over a viem account. */
export function evmSigner(account: LocalAccount) {
  return { address: account.address, signMessage: (message: string) => account.signMessage({ message }) };
}

/** The calls an agent makes, over real HTTP. */
export function agentClient(url: string) {
  return {
    async instructions(): Promise<HumanProofChallenge> {
      const response = await fetch(`${url}/api/v1/instructions`);
      if (response.status !== 200) throw new Error(`instructions: ${response.status}`);
      return (await response.json()) as HumanProofChallenge;
    },
    async challenge(): Promise<{ nonce: string; message: string }> {
      const response = await fetch(`${url}/api/v1/challenge`);
      if (response.status !== 200) throw new Error(`challenge: ${response.status}`);
      return (await response.json()) as { nonce: string; message: string };
    },
    async claimWithHeader(header: string): Promise<Reply> {
      return reply(
        await fetch(`${url}/api/v1/claim`, { method: "POST", headers: { "HUMAN-PROOF": header } }),
      );
    },
    async claimWithBody(body?: unknown, rawBody?: string): Promise<Reply> {
      const text = rawBody ?? (body === undefined ? undefined : JSON.stringify(body));
      return reply(
        await fetch(`${url}/api/v1/claim`, {
          method: "POST",
          headers: text === undefined ? {} : { "content-type": "application/json" },
          body: text,
        }),
      );
    },
    /** Helper path end to end: instructions, SDK signature, claim with the header. */
    async helperProof(account: LocalAccount, chainId = "eip155:45056"): Promise<string> {
      return signHumanProofChallengeEVMUnchecked(await this.instructions(), evmSigner(account), chainId);
    },
    /** Direct path end to end: challenge, EIP-191 signature of its message. */
    async directClaimBody(account: LocalAccount): Promise<{ nonce: string; signature: string }> {
      const { nonce, message } = await this.challenge();
      return { nonce, signature: await account.signMessage({ message }) };
    },
  };
}

/** The events the service wrote to its outbox, oldest first. */
export async function outboxEvents(
  db: Kysely<AgentAuthDb>,
): Promise<Array<{ type: string; subject: string; data: any }>> {
  const rows = await db.selectFrom("outbox").select(["subject", "event"]).orderBy("seq").execute();
  return rows.map((r) => ({ type: r.event.type, subject: r.subject, data: r.event.data }));
}
