/**
 * Everything a gateway test runs against, all real and local: a devnet with the EIP-3009 test USDC, Postgres
 * (one database per test file), NATS JetStream (own stream prefix), the attestations-api, and gateways built
 * from `app.ts` with the in-process x402 facilitator settling on the devnet.
 */

import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Kysely } from "@humanpass/db";
import { ABIs, type Devnet, startDevnet } from "@humanpass/devnet";
import type { CloudEvent, NatsConnection, Topology } from "@humanpass/event-bus";
import type { HttpApp } from "@humanpass/http";
import {
  type ChallengeNonces,
  createChallengeNonces,
  createPoUVerifier,
  type PoUVerifier,
} from "@humanpass/human-proof";
import type { ServiceMetrics } from "@humanpass/telemetry";
import { buildStack, freePort, type TestDatabase, testBus, testDatabase } from "@humanpass/testing";
import { serviceConnections } from "@humanpass/testing/service-connections";
import { createEvmFacilitatorClient } from "@humanpass/x402-fastify";
import type { FacilitatorClient } from "@x402/core/server";
import pino from "pino";
import type { Address, Hex } from "viem";
import { buildApp } from "../../src/app.ts";
import { SCHEMA } from "../../src/config.ts";
import { GatewayHumanProofStore } from "../../src/db/human-proof-store.ts";
import { migrations } from "../../src/db/migrations/index.ts";
import { outboxPaymentEvents } from "../../src/events/payment-events.ts";
import { type PaidRouteConfig, parseRoutesFile, type RoutesConfigFile } from "../../src/routes-file.ts";
import { type AttestationsApi, startAttestationsApi } from "./attestations-api.ts";

/** The challenge-nonce key the gateways of a stack share, as replicas of one deployment do. */
export const NONCE_KEY = "test-gateway-challenge-nonce-key-0001";

export const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" });

/** Devnet accounts: 1..13 are agents holding test USDC, 17 and 18 settle, 19 is paid. */
export const SETTLER_ACCOUNTS = [17, 18];
export const PAY_TO_ACCOUNT = 19;

export interface Gateway {
  url: string;
  app: HttpApp;
  close(): Promise<void>;
}

export interface GatewayOptions {
  routes: PaidRouteConfig[];
  facilitator?: FacilitatorClient;
  verifier?: PoUVerifier;
  /** Default: nonces of the key every gateway of the stack shares, as replicas do. */
  challengeNonces?: ChallengeNonces;
  /** Skip the routes-file checks, to serve values the file would refuse (e.g. maxUse 0). */
  unchecked?: boolean;
  metrics?: ServiceMetrics;
}

export interface Stack {
  devnet: Devnet;
  database: TestDatabase;
  /** The gateway's schema. */
  db: Kysely<any>;
  /** The human-proof store every gateway of the stack shares (counts, nonces, payment claims). */
  storage: GatewayHumanProofStore;
  nats: NatsConnection;
  topology: Topology;
  attestations: AttestationsApi;
  network: `eip155:${number}`;
  payTo: Address;
  /** Every event the gateways published to NATS, in arrival order. */
  events: CloudEvent<any>[];
  facilitator: FacilitatorClient;
  verifier(): PoUVerifier;
  routesFile(routes: PaidRouteConfig[]): RoutesConfigFile;
  /** Writes a routes file for a gateway process and returns its path. */
  writeRoutesFile(routes: PaidRouteConfig[]): string;
  startGateway(options: GatewayOptions): Promise<Gateway>;
  usdcBalance(address: Address): Promise<bigint>;
  agentKey(index: number): Hex;
  close(): Promise<void>;
}

export async function startStack(label: string): Promise<Stack> {
  const stack = await buildStack()
    .add("devnet", {
      start: () => startDevnet({ accounts: 20, usdcAccounts: 14 }),
      stop: (devnet) => devnet.stop(),
    })
    .add("database", testDatabase(label))
    .add("bus", testBus({ streams: ["PAYMENTS", "CHAIN"], record: "payments.>" }))
    .add(
      "connections",
      serviceConnections({
        name: "payment-gateway",
        schema: SCHEMA,
        migrations,
        streams: ["PAYMENTS", "CHAIN"],
        publishes: true,
        logger,
        pool: { max: 20 },
        relay: { pollIntervalMs: 100 },
      }),
    )
    .add("attestations", {
      start: ({ database }) => startAttestationsApi(database.url),
      stop: (attestations) => attestations.close(),
    })
    .start();
  const { devnet, database, attestations } = stack;
  const { nats, topology, events } = stack.bus;
  const { pool, db, relay } = stack.connections;
  const outboxCommitted = () => relay?.wake();
  const network = `eip155:${devnet.chainId}` as const;
  const payTo = devnet.accounts[PAY_TO_ACCOUNT].address;
  const facilitator = createEvmFacilitatorClient({
    rpcUrl: devnet.rpcUrl,
    chain: devnet.chain,
    privateKey: devnet.accounts[SETTLER_ACCOUNTS[0]].privateKey,
  });
  const storage = new GatewayHumanProofStore(pool, topology, logger);

  const routesFile = (routes: PaidRouteConfig[]) =>
    parseRoutesFile({
      assets: { [network]: { address: devnet.addresses.usdc, name: "USD Coin", version: "2", decimals: 6 } },
      routes,
    });
  const uncheckedRoutesFile = (routes: PaidRouteConfig[]): RoutesConfigFile => ({
    assets: { [network]: { address: devnet.addresses.usdc, name: "USD Coin", version: "2", decimals: 6 } },
    routes,
  });
  const verifier = () => createPoUVerifier({ attestationsApiUrl: attestations.url });

  return {
    devnet,
    database,
    db,
    storage,
    nats,
    topology,
    attestations,
    network,
    payTo,
    events,
    facilitator,
    verifier,
    routesFile,
    writeRoutesFile(routes) {
      const file = path.join(tmpdir(), `${database.name}-routes-${Math.random().toString(36).slice(2)}.json`);
      writeFileSync(file, JSON.stringify(routesFile(routes)));
      return file;
    },
    async startGateway(options) {
      const events = outboxPaymentEvents(db, topology, logger, outboxCommitted);
      // Each gateway its own store on the shared database, as replicas have.
      const store = new GatewayHumanProofStore(pool, topology, logger, outboxCommitted);
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      const app = await buildApp({
        logger,
        publicUrl: url,
        challengeNonces: options.challengeNonces ?? createChallengeNonces({ keys: [NONCE_KEY] }),
        routesFile: options.unchecked ? uncheckedRoutesFile(options.routes) : routesFile(options.routes),
        payTo,
        facilitator: options.facilitator ?? facilitator,
        verifier: options.verifier ?? verifier(),
        admissions: store,
        reservations: store,
        events,
        rateLimit: false,
        metrics: options.metrics,
      });
      await app.listen({ port, host: "127.0.0.1" });
      const gateway = {
        url,
        app,
        close: async () => {
          await app.close();
          await events.drain();
        },
      };
      stack.onClose(gateway.close);
      return gateway;
    },
    usdcBalance(address) {
      return devnet.client.readContract({
        address: devnet.addresses.usdc,
        abi: ABIs.usdc,
        functionName: "balanceOf",
        args: [address],
      }) as Promise<bigint>;
    },
    agentKey(index) {
      return devnet.accounts[index].privateKey;
    },
    close: stack.close,
  };
}

/** Tiers priced in test USDC base units (6 decimals). */
export function standardTier(network: string, amount: string): PaidRouteConfig["accepts"][number] {
  return { scheme: "exact", network, price: `$${Number(amount) / 1e6}` };
}

export function humanTier(
  network: string,
  amount: string,
  extra: { maxUse?: number; scope?: string; requiredAttestations?: string[] } = {},
): PaidRouteConfig["accepts"][number] {
  return {
    scheme: "exact",
    network,
    price: `$${Number(amount) / 1e6}`,
    extra: { requiredAttestations: ["$ownership"], ...extra },
  };
}

export function demoRoute(
  pathName: string,
  accepts: PaidRouteConfig["accepts"],
  extras: Partial<PaidRouteConfig> = {},
): PaidRouteConfig {
  return {
    method: "GET",
    path: pathName,
    description: `test route ${pathName}`,
    mimeType: "application/json",
    accepts,
    demo: { body: { route: pathName } },
    ...extras,
  };
}
