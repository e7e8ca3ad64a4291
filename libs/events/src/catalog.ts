import { type Static, type TSchema, Type } from "@sinclair/typebox";

const Hex32 = Type.String({ pattern: "^0x[0-9a-fA-F]{64}$", description: "32-byte hex with 0x prefix" });
const Address = Type.String({ pattern: "^0x[0-9a-fA-F]{40}$" });
const Hex = Type.String({ pattern: "^0x([0-9a-fA-F]{2})*$" });
const Decimal = Type.String({ pattern: "^[0-9]+$", description: "non-negative integer as a decimal string" });
const IsoTime = Type.String({ format: "date-time" });
const UnixSeconds = Type.Integer({ minimum: 0 });

/** Where a chain record was seen; lets consumers drop what a reorg orphaned. */
const ChainPosition = {
  chainId: Type.Integer(),
  blockNumber: Type.Integer({ minimum: 0 }),
  blockHash: Hex32,
  logIndex: Type.Integer({ minimum: 0 }),
  txHash: Hex32,
};

export const UniquenessVerified = Type.Object({
  sessionId: Type.Integer({ minimum: 0 }),
  nullifier: Decimal,
  nullifierSessionId: Decimal,
  userDid: Type.String(),
  userId: Decimal,
  verifiedAt: IsoTime,
});

export const SchemaRegistered = Type.Object({
  schemaId: Hex32,
  /** Empty for schemas registered through the older registry revision, which had no name. */
  name: Type.String(),
  schema: Type.String(),
  resolver: Address,
  revocable: Type.Boolean(),
  registerer: Address,
  registererIden3Id: Decimal,
  registry: Address,
  blockTimestamp: UnixSeconds,
  ...ChainPosition,
});

export const AttestationRecorded = Type.Object({
  attestationId: Hex32,
  schemaId: Hex32,
  creationTime: UnixSeconds,
  expirationTime: UnixSeconds,
  revocationTime: UnixSeconds,
  attesterDid: Type.String(),
  attesterIden3Id: Decimal,
  attesterEthereumAddress: Address,
  recipientDid: Type.String(),
  recipientIden3Id: Decimal,
  recipientEthereumAddress: Address,
  revocable: Type.Boolean(),
  refId: Hex32,
  data: Hex,
  registry: Address,
  ...ChainPosition,
});

export const AttestationRevoked = Type.Object({
  attestationId: Hex32,
  revoker: Address,
  revokerIden3Id: Decimal,
  recipientDid: Type.String(),
  recipientIden3Id: Decimal,
  revocationTime: UnixSeconds,
  registry: Address,
  ...ChainPosition,
});

export const BlocksReverted = Type.Object({
  chainId: Type.Integer(),
  /** Every block from this number on was orphaned; the canonical ones are indexed again after this event. */
  fromBlock: Type.Integer({ minimum: 0 }),
  toBlock: Type.Integer({ minimum: 0 }),
  attestationIds: Type.Array(Hex32),
  revokedAttestationIds: Type.Array(Hex32),
  schemaIds: Type.Array(Hex32),
});

export const HumanVerified = Type.Object({
  humanId: Decimal,
  verifiedAt: IsoTime,
  humanDid: Type.String(),
  resource: Type.String(),
  agentDid: Type.Optional(Type.String()),
});

export const HumanNotRegistered = Type.Object({
  did: Type.String(),
  resource: Type.String(),
});

export const MaxUseExceeded = Type.Object({
  humanId: Decimal,
  maxUse: Type.Integer({ minimum: 1 }),
  resource: Type.String(),
  scope: Type.Optional(
    Type.String({ description: "the quota's namespace (`extra.scope`, default the resource URL)" }),
  ),
});

export const ClaimAccepted = Type.Object({
  path: Type.Union([Type.Literal("helper"), Type.Literal("direct")]),
  agentDid: Type.String(),
  agentAddress: Address,
  humanId: Decimal,
  humanDid: Type.String(),
  resource: Type.String(),
});

export const PaymentSettled = Type.Object({
  resource: Type.String(),
  network: Type.String(),
  payer: Type.String(),
  payTo: Type.String(),
  amount: Decimal,
  asset: Type.String(),
  transaction: Type.String(),
  humanId: Type.Optional(Decimal),
});

export const PaymentFailed = Type.Object({
  resource: Type.String(),
  network: Type.String(),
  stage: Type.Union([Type.Literal("verify"), Type.Literal("settle"), Type.Literal("handler")]),
  reason: Type.String(),
  payer: Type.Optional(Type.String()),
  humanId: Type.Optional(Decimal),
});

/**
 * Which stream a producer's events go to; the subject is `<domain>.<type>`. `source` is the one service that
 * publishes there (its CloudEvents `source`, its NATS user): consumers refuse an event from anyone else.
 */
export const STREAMS = {
  VERIFIER: { domain: "verifier", source: "verifier", description: "Proof of Uniqueness verifier" },
  CHAIN: {
    domain: "chain",
    source: "chain-indexer",
    description: "chain-indexer: registry records as seen on chain",
  },
  AGENT_AUTH: { domain: "agent_auth", source: "agent-auth", description: "agent-auth claims" },
  PAYMENTS: { domain: "payments", source: "payment-gateway", description: "payment-gateway" },
} as const;
export type StreamName = keyof typeof STREAMS;

export const EVENTS = {
  VERIFIER: { uniqueness_verified: UniquenessVerified },
  CHAIN: {
    schema_registered: SchemaRegistered,
    attestation_recorded: AttestationRecorded,
    attestation_revoked: AttestationRevoked,
    blocks_reverted: BlocksReverted,
  },
  AGENT_AUTH: {
    human_verified: HumanVerified,
    human_not_registered: HumanNotRegistered,
    claim_accepted: ClaimAccepted,
  },
  PAYMENTS: {
    human_verified: HumanVerified,
    human_not_registered: HumanNotRegistered,
    max_use_exceeded: MaxUseExceeded,
    payment_settled: PaymentSettled,
    payment_failed: PaymentFailed,
  },
} as const satisfies Record<StreamName, Record<string, TSchema>>;

export type EventType<S extends StreamName> = keyof (typeof EVENTS)[S] & string;
export type EventData<S extends StreamName, T extends EventType<S>> = Static<(typeof EVENTS)[S][T] & TSchema>;

/** The payload of every event type of every stream (indexed with a union of types, the union of their payloads). */
export type Payloads = {
  [S in StreamName]: {
    [T in keyof (typeof EVENTS)[S]]: (typeof EVENTS)[S][T] extends infer X extends TSchema
      ? Static<X>
      : never;
  };
};

export function eventSchema(stream: StreamName, type: string): TSchema | undefined {
  return (EVENTS[stream] as Record<string, TSchema>)[type];
}

export type UniquenessVerifiedData = Static<typeof UniquenessVerified>;
export type SchemaRegisteredData = Static<typeof SchemaRegistered>;
export type AttestationRecordedData = Static<typeof AttestationRecorded>;
export type AttestationRevokedData = Static<typeof AttestationRevoked>;
export type BlocksRevertedData = Static<typeof BlocksReverted>;
export type HumanVerifiedData = Static<typeof HumanVerified>;
export type HumanNotRegisteredData = Static<typeof HumanNotRegistered>;
export type MaxUseExceededData = Static<typeof MaxUseExceeded>;
export type ClaimAcceptedData = Static<typeof ClaimAccepted>;
export type PaymentSettledData = Static<typeof PaymentSettled>;
export type PaymentFailedData = Static<typeof PaymentFailed>;
