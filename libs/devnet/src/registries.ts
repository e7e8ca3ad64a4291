import { didFromAddress, iden3IdFromAddress } from "@humanpass/identity";
import {
  type Address,
  encodeAbiParameters,
  encodePacked,
  getAddress,
  type Hex,
  keccak256,
  parseAbiParameters,
  parseEventLogs,
  type TransactionReceipt,
  zeroAddress,
  zeroHash,
} from "viem";
import { ABIs } from "./artifacts.ts";
import { ensureSender } from "./control.ts";
import { type Devnet, sendAndConfirm } from "./devnet.ts";

export interface IdentityInput {
  did: string;
  /** iden3 ID; a decimal string or a bigint. */
  iden3Id: bigint | string;
  /** Zero or absent: the registry stores the sender's address. */
  ethereumAddress?: Address;
}

export interface Identity {
  did: string;
  iden3Id: bigint;
  ethereumAddress: Address;
}

/** The address-derived identity Billions uses for an EVM account: `did:iden3:billions:<network>:…`. */
export function identityFromAddress(address: Address, network: "main" | "test" = "main"): Identity {
  return {
    did: didFromAddress(address, network),
    iden3Id: BigInt(iden3IdFromAddress(address, network)),
    ethereumAddress: getAddress(address),
  };
}

/** ABI-encodes attestation data for a schema string such as `uint8 stars,string comment`. */
export function encodeSchemaData(schema: string, values: readonly unknown[]): Hex {
  if (schema.trim() === "") return "0x";
  return encodeAbiParameters(parseAbiParameters(schema) as never, values as never);
}

export interface Transacted {
  txHash: Hex;
  blockNumber: bigint;
}

export interface SchemaInput {
  name: string;
  /** Field list, e.g. `bytes data` or `uint8 stars,string comment`. */
  schema: string;
  resolver?: Address;
  revocable?: boolean;
  /** iden3 ID of the registering user (must be non-zero); defaults to the sender's address-derived ID. */
  userId?: bigint | string;
  from?: Address;
}

/** The id the devnet SchemaRegistry gives a schema (Billions' own derivation is not published). */
export function schemaIdOf(input: Pick<SchemaInput, "name" | "schema" | "resolver" | "revocable">): Hex {
  return keccak256(
    encodePacked(
      ["string", "string", "address", "bool"],
      [input.name, input.schema, input.resolver ?? zeroAddress, input.revocable ?? true],
    ),
  );
}

/** Registers the schema unless the registry already has it; returns its id either way. */
export async function ensureSchema(devnet: Devnet, input: SchemaInput): Promise<Hex> {
  const id = schemaIdOf(input);
  if ((await getSchema(devnet, id)).id === id) return id;
  return (await registerSchema(devnet, input)).id;
}

/** Registers a schema on the current SchemaRegistry (the revision whose schemas have a name). */
export async function registerSchema(devnet: Devnet, input: SchemaInput): Promise<Transacted & { id: Hex }> {
  const from = input.from ?? devnet.accounts[0]!.address;
  const receipt = await sendAndConfirm(
    devnet.client,
    await devnet.client.writeContract({
      address: devnet.addresses.schemaRegistry,
      abi: ABIs.schemaRegistry,
      functionName: "register",
      args: [
        input.name,
        input.schema,
        input.resolver ?? zeroAddress,
        input.revocable ?? true,
        BigInt(input.userId ?? identityFromAddress(from).iden3Id),
      ],
      account: await ensureSender(devnet, from),
    }),
  );
  const [event] = parseEventLogs({ abi: ABIs.schemaRegistry, logs: receipt.logs, eventName: "Registered" });
  return { id: event!.args.id, ...transacted(receipt) };
}

/** Registers a schema on the older SchemaRegistry, whose `Registered` event has no name. */
export async function registerLegacySchema(
  devnet: Devnet,
  input: Omit<SchemaInput, "name">,
): Promise<Transacted & { id: Hex }> {
  const from = input.from ?? devnet.accounts[0]!.address;
  const receipt = await sendAndConfirm(
    devnet.client,
    await devnet.client.writeContract({
      address: devnet.addresses.legacySchemaRegistry,
      abi: ABIs.legacySchemaRegistry,
      functionName: "register",
      args: [
        input.schema,
        input.resolver ?? zeroAddress,
        input.revocable ?? true,
        BigInt(input.userId ?? identityFromAddress(from).iden3Id),
      ],
      account: await ensureSender(devnet, from),
    }),
  );
  const [event] = parseEventLogs({
    abi: ABIs.legacySchemaRegistry,
    logs: receipt.logs,
    eventName: "Registered",
  });
  return { id: event!.args.id, ...transacted(receipt) };
}

export async function getSchema(devnet: Devnet, id: Hex) {
  return devnet.client.readContract({
    address: devnet.addresses.schemaRegistry,
    abi: ABIs.schemaRegistry,
    functionName: "getSchema",
    args: [id],
  });
}

export async function getLegacySchema(devnet: Devnet, id: Hex) {
  return devnet.client.readContract({
    address: devnet.addresses.legacySchemaRegistry,
    abi: ABIs.legacySchemaRegistry,
    functionName: "getSchema",
    args: [id],
  });
}

export interface AttestationInput {
  schemaId: Hex;
  attester: IdentityInput;
  recipient: IdentityInput;
  /** Unix seconds; 0 (default) never expires. */
  expirationTime?: bigint | number;
  revocable?: boolean;
  refId?: Hex;
  /** ABI-encoded data (see `encodeSchemaData`); default empty. */
  data?: Hex;
}

export interface SendOptions {
  /** Sender; default the attester's address when given, else the first devnet account. */
  from?: Address;
}

export interface BatchOptions extends SendOptions {
  /** Records per transaction. */
  batchSize?: number;
}

function toRequest(input: AttestationInput) {
  const identity = (value: IdentityInput) => ({
    did: value.did,
    iden3Id: BigInt(value.iden3Id),
    ethereumAddress: value.ethereumAddress ?? zeroAddress,
  });
  return {
    schemaId: input.schemaId,
    attester: identity(input.attester),
    recipient: identity(input.recipient),
    expirationTime: BigInt(input.expirationTime ?? 0),
    revocable: input.revocable ?? true,
    refId: input.refId ?? zeroHash,
    data: input.data ?? "0x",
  };
}

function senderOf(devnet: Devnet, input: AttestationInput, options: SendOptions): Address {
  const attesterAddress = input.attester.ethereumAddress;
  return (
    options.from ??
    (attesterAddress && attesterAddress !== zeroAddress ? attesterAddress : devnet.accounts[0]!.address)
  );
}

function transacted(receipt: TransactionReceipt): Transacted {
  return { txHash: receipt.transactionHash, blockNumber: receipt.blockNumber };
}

function recordedIds(receipt: TransactionReceipt): Hex[] {
  return parseEventLogs({
    abi: ABIs.attestationRegistry,
    logs: receipt.logs,
    eventName: "AttestationRecorded",
  }).map((event) => event.args.id);
}

export async function recordAttestation(
  devnet: Devnet,
  input: AttestationInput,
  options: SendOptions = {},
): Promise<Transacted & { id: Hex }> {
  const receipt = await sendAndConfirm(
    devnet.client,
    await devnet.client.writeContract({
      address: devnet.addresses.attestationRegistry,
      abi: ABIs.attestationRegistry,
      functionName: "recordAttestation",
      args: [toRequest(input)],
      account: await ensureSender(devnet, senderOf(devnet, input, options)),
    }),
  );
  return { id: recordedIds(receipt)[0]!, ...transacted(receipt) };
}

// A record with two 66-character DIDs takes about 0.4M gas; the margin covers longer data.
const GAS_PER_RECORD = 1_000_000n;
const GAS_PER_REVOCATION = 100_000n;
const MAX_TX_GAS = 900_000_000n;

/**
 * Records many attestations with the devnet-only `recordAttestations` entry point, `batchSize` (default
 * 100) per transaction and one block per transaction. Hardhat's cost per EVM step grows with the length of
 * a transaction, so batches far above 100 get slower, not faster. Consecutive inputs with the same sender share a
 * transaction; the result lists the records in input order.
 */
export async function recordAttestations(
  devnet: Devnet,
  inputs: readonly AttestationInput[],
  options: BatchOptions = {},
): Promise<(Transacted & { id: Hex })[]> {
  const batchSize = options.batchSize ?? 100;
  const results: (Transacted & { id: Hex })[] = [];
  let start = 0;
  while (start < inputs.length) {
    const sender = senderOf(devnet, inputs[start]!, options);
    let end = start + 1;
    while (
      end < inputs.length &&
      end - start < batchSize &&
      senderOf(devnet, inputs[end]!, options) === sender
    )
      end++;
    const batch = inputs.slice(start, end);
    const receipt = await sendAndConfirm(
      devnet.client,
      await devnet.client.writeContract({
        address: devnet.addresses.attestationRegistry,
        abi: ABIs.attestationRegistry,
        functionName: "recordAttestations",
        args: [batch.map(toRequest)],
        account: await ensureSender(devnet, sender),
        gas: minGas(GAS_PER_RECORD * BigInt(batch.length)),
      }),
    );
    const ids = recordedIds(receipt);
    if (ids.length !== batch.length)
      throw new Error(`expected ${batch.length} records in ${receipt.transactionHash}`);
    for (const id of ids) results.push({ id, ...transacted(receipt) });
    start = end;
  }
  return results;
}

function minGas(gas: bigint): bigint {
  return gas < MAX_TX_GAS ? gas + 200_000n : MAX_TX_GAS;
}

export async function getAttestation(devnet: Devnet, id: Hex) {
  return devnet.client.readContract({
    address: devnet.addresses.attestationRegistry,
    abi: ABIs.attestationRegistry,
    functionName: "getAttestation",
    args: [id],
  });
}

async function attesterAddresses(devnet: Devnet, ids: readonly Hex[]): Promise<Address[]> {
  const addresses: Address[] = [];
  for (let i = 0; i < ids.length; i += 500) {
    const records = await devnet.client.multicall({
      allowFailure: false,
      contracts: ids.slice(i, i + 500).map((id) => ({
        address: devnet.addresses.attestationRegistry,
        abi: ABIs.attestationRegistry,
        functionName: "getAttestation" as const,
        args: [id] as const,
      })),
    });
    addresses.push(...records.map((record) => record.attester.ethereumAddress));
  }
  return addresses;
}

/** Revokes as the attester (only the attester may), unless `from` says otherwise. */
export async function revokeAttestation(
  devnet: Devnet,
  id: Hex,
  options: SendOptions = {},
): Promise<Transacted> {
  const from = options.from ?? (await attesterAddresses(devnet, [id]))[0]!;
  const receipt = await sendAndConfirm(
    devnet.client,
    await devnet.client.writeContract({
      address: devnet.addresses.attestationRegistry,
      abi: ABIs.attestationRegistry,
      functionName: "revokeAttestation",
      args: [id],
      account: await ensureSender(devnet, from),
    }),
  );
  return transacted(receipt);
}

/** Revokes many attestations, each as its attester: one batch of up to `batchSize` (default 500) per transaction. */
export async function revokeAttestations(
  devnet: Devnet,
  ids: readonly Hex[],
  options: BatchOptions = {},
): Promise<Transacted[]> {
  const batchSize = options.batchSize ?? 500;
  const senders = options.from ? ids.map(() => options.from!) : await attesterAddresses(devnet, ids);
  const idsBySender = new Map<Address, Hex[]>();
  ids.forEach((id, i) => {
    const sender = senders[i]!;
    idsBySender.set(sender, [...(idsBySender.get(sender) ?? []), id]);
  });
  const results: Transacted[] = [];
  for (const [sender, senderIds] of idsBySender) {
    for (let start = 0; start < senderIds.length; start += batchSize) {
      const batch = senderIds.slice(start, start + batchSize);
      const receipt = await sendAndConfirm(
        devnet.client,
        await devnet.client.writeContract({
          address: devnet.addresses.attestationRegistry,
          abi: ABIs.attestationRegistry,
          functionName: "revokeAttestations",
          args: [batch],
          account: await ensureSender(devnet, sender),
          gas: minGas(GAS_PER_REVOCATION * BigInt(batch.length)),
        }),
      );
      results.push(transacted(receipt));
    }
  }
  return results;
}
