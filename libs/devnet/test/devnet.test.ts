import { readdirSync, readFileSync } from "node:fs";
import { didFromAddress, iden3IdFromAddress } from "@humanpass/identity";
import { type Hex, keccak256, parseSignature, stringToHex, zeroAddress } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ABIs,
  blockNumber,
  type Devnet,
  encodeSchemaData,
  getAttestation,
  getLegacySchema,
  getSchema,
  identityFromAddress,
  MULTICALL3_ADDRESS,
  mine,
  recordAttestation,
  recordAttestations,
  registerLegacySchema,
  registerSchema,
  revert,
  revokeAttestation,
  revokeAttestations,
  schemaIdOf,
  seedDemo,
  snapshot,
  startDevnet,
} from "../src/index.ts";

/** Hardhat nodes that are children of this process. */
function hardhatChildren(): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
        return ppid === process.pid && readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("hardhat");
      } catch {
        return false;
      }
    })
    .map(Number);
}

let devnet: Devnet;

beforeAll(async () => {
  devnet = await startDevnet();
});

afterAll(async () => {
  await devnet?.stop();
});

describe("startDevnet", () => {
  it("serves chain id 45056 on 127.0.0.1 with every contract deployed and funded accounts", async () => {
    expect(devnet.rpcUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await devnet.client.getChainId()).toBe(45056);
    for (const address of Object.values(devnet.addresses)) {
      expect(await devnet.client.getCode({ address })).toMatch(/^0x[0-9a-f]{100,}$/);
    }
    expect(devnet.addresses.multicall3).toBe(MULTICALL3_ADDRESS);
    expect(devnet.accounts).toHaveLength(20);
    expect(privateKeyToAccount(devnet.accounts[3]!.privateKey).address).toBe(devnet.accounts[3]!.address);
    expect(await devnet.client.getBalance({ address: devnet.accounts[19]!.address })).toBe(10n ** 22n);
    const usdc = { address: devnet.addresses.usdc, abi: ABIs.usdc } as const;
    expect(
      await devnet.client.readContract({
        ...usdc,
        functionName: "balanceOf",
        args: [devnet.accounts[9]!.address],
      }),
    ).toBe(1_000_000_000_000n);
    expect(
      await devnet.client.readContract({
        ...usdc,
        functionName: "balanceOf",
        args: [devnet.accounts[10]!.address],
      }),
    ).toBe(0n);
  });
});

describe("schema registries", () => {
  it("registers a named schema and emits the current Registered form", async () => {
    const registered = await registerSchema(devnet, {
      name: "Score",
      schema: "uint256 score",
      revocable: false,
      userId: 42n,
    });
    expect(registered.id).toBe(schemaIdOf({ name: "Score", schema: "uint256 score", revocable: false }));
    expect(await getSchema(devnet, registered.id)).toEqual({
      id: registered.id,
      resolver: zeroAddress,
      revocable: false,
      schema: "uint256 score",
      name: "Score",
    });
    const [log] = await devnet.client.getContractEvents({
      address: devnet.addresses.schemaRegistry,
      abi: ABIs.schemaRegistry,
      eventName: "Registered",
      fromBlock: registered.blockNumber,
      toBlock: registered.blockNumber,
    });
    expect(log!.args).toMatchObject({
      id: registered.id,
      registerer: devnet.accounts[0]!.address,
      userId: 42n,
    });
    expect(log!.args.schema).toMatchObject({ name: "Score", schema: "uint256 score" });
    await expect(
      registerSchema(devnet, { name: "Score", schema: "uint256 score", revocable: false }),
    ).rejects.toThrow(/SchemaAlreadyExists/);
  });

  it("registers on the legacy registry, whose Registered event has no name", async () => {
    const registered = await registerLegacySchema(devnet, { schema: "string note", revocable: true });
    expect(await getLegacySchema(devnet, registered.id)).toEqual({
      id: registered.id,
      resolver: zeroAddress,
      revocable: true,
      schema: "string note",
    });
    const [log] = await devnet.client.getContractEvents({
      address: devnet.addresses.legacySchemaRegistry,
      abi: ABIs.legacySchemaRegistry,
      eventName: "Registered",
      fromBlock: registered.blockNumber,
    });
    expect(log!.args.schema).toEqual({
      id: registered.id,
      resolver: zeroAddress,
      revocable: true,
      schema: "string note",
    });
    expect(log!.args.userId).toBe(BigInt(iden3IdFromAddress(devnet.accounts[0]!.address)));
  });
});

describe("attestation registry", () => {
  it("records an attestation that getAttestation returns field by field", async () => {
    const { id: schemaId } = await registerSchema(devnet, {
      name: "Review",
      schema: "uint8 stars,string comment",
    });
    const attester = identityFromAddress(devnet.accounts[1]!.address);
    const recipient = identityFromAddress(devnet.accounts[2]!.address);
    const data = encodeSchemaData("uint8 stars,string comment", [4, "fine"]);
    const refId = keccak256(stringToHex("ref"));
    const recorded = await recordAttestation(devnet, {
      schemaId,
      attester,
      recipient,
      expirationTime: 4_000_000_000,
      refId,
      data,
    });
    const block = await devnet.client.getBlock({ blockNumber: recorded.blockNumber });

    expect(await getAttestation(devnet, recorded.id)).toEqual({
      id: recorded.id,
      schemaId,
      creationTime: block.timestamp,
      expirationTime: 4_000_000_000n,
      revocationTime: 0n,
      attester,
      recipient,
      revocable: true,
      refId,
      data,
    });
    const [event] = await devnet.client.getContractEvents({
      address: devnet.addresses.attestationRegistry,
      abi: ABIs.attestationRegistry,
      eventName: "AttestationRecorded",
      fromBlock: recorded.blockNumber,
      toBlock: recorded.blockNumber,
    });
    expect(event!.args).toEqual({
      id: recorded.id,
      schemaId,
      attesterIden3Id: attester.iden3Id,
      recipientDid: recipient.did,
      recipientIden3Id: recipient.iden3Id,
      timestamp: block.timestamp,
    });
    const views = { address: devnet.addresses.attestationRegistry, abi: ABIs.attestationRegistry } as const;
    expect(
      await devnet.client.readContract({
        ...views,
        functionName: "getAttestationsByUserId",
        args: [recipient.iden3Id],
      }),
    ).toContain(recorded.id);
    expect(
      await devnet.client.readContract({
        ...views,
        functionName: "getAttestationsByRecipientIden3IdAndSchemaId",
        args: [recipient.iden3Id, schemaId],
      }),
    ).toEqual([recorded.id]);
    expect(
      await devnet.client.readContract({
        ...views,
        functionName: "getAttestationsByAttesterIden3IdAndSchemaId",
        args: [recipient.iden3Id, schemaId],
      }),
    ).toEqual([]);
    expect(
      await devnet.client.readContract({ ...views, functionName: "isAttestationValid", args: [recorded.id] }),
    ).toBe(true);
  });

  it("stores the sender as attester address when the request leaves it empty", async () => {
    const { id: schemaId } = await registerSchema(devnet, { name: "Relay", schema: "bytes data" });
    const human = identityFromAddress(devnet.accounts[5]!.address);
    const relay = devnet.accounts[6]!.address;
    const recorded = await recordAttestation(
      devnet,
      {
        schemaId,
        attester: { did: human.did, iden3Id: human.iden3Id },
        recipient: identityFromAddress(devnet.accounts[7]!.address),
      },
      { from: relay },
    );
    expect((await getAttestation(devnet, recorded.id)).attester).toEqual({
      ...human,
      ethereumAddress: relay,
    });
  });

  it("lets only the attester revoke, only once, and only on a revocable schema", async () => {
    const revocable = await registerSchema(devnet, {
      name: "Revocable",
      schema: "bytes data",
      revocable: true,
    });
    const irrevocable = await registerSchema(devnet, {
      name: "Irrevocable",
      schema: "bytes data",
      revocable: false,
    });
    const attester = identityFromAddress(devnet.accounts[3]!.address);
    const recipient = identityFromAddress(devnet.accounts[4]!.address);
    const a = await recordAttestation(devnet, {
      schemaId: revocable.id,
      attester,
      recipient,
      revocable: false,
    });
    const b = await recordAttestation(devnet, { schemaId: irrevocable.id, attester, recipient });

    await expect(revokeAttestation(devnet, a.id, { from: devnet.accounts[4]!.address })).rejects.toThrow(
      /OnlyAttesterCanRevoke/,
    );
    await expect(revokeAttestation(devnet, b.id)).rejects.toThrow(/SchemaDoesNotAllowRevocation/);
    const revoked = await revokeAttestation(devnet, a.id);
    const block = await devnet.client.getBlock({ blockNumber: revoked.blockNumber });
    expect((await getAttestation(devnet, a.id)).revocationTime).toBe(block.timestamp);
    await expect(revokeAttestation(devnet, a.id)).rejects.toThrow(/AttestationAlreadyRevoked/);
    await expect(getAttestation(devnet, keccak256("0x01"))).rejects.toThrow(/AttestationDoesNotExist/);
    await expect(
      recordAttestation(devnet, { schemaId: keccak256("0x02"), attester, recipient }),
    ).rejects.toThrow(/SchemaDoesNotExist/);
  });

  it("records and revokes in batches, keeping input order, as each attester", async () => {
    const { id: schemaId } = await registerSchema(devnet, { name: "Batch", schema: "uint256 n" });
    const attesters = [devnet.accounts[1]!.address, devnet.accounts[2]!.address].map((a) =>
      identityFromAddress(a),
    );
    const inputs = Array.from({ length: 250 }, (_, n) => ({
      schemaId,
      attester: attesters[Math.floor(n / 125)]!,
      recipient: identityFromAddress(`0x${(n + 1).toString(16).padStart(40, "0")}`),
      data: encodeSchemaData("uint256 n", [BigInt(n)]),
    }));
    const recorded = await recordAttestations(devnet, inputs, { batchSize: 100 });
    expect(recorded).toHaveLength(250);
    expect(new Set(recorded.map((r) => r.txHash)).size).toBe(4);
    const last = await getAttestation(devnet, recorded[249]!.id);
    expect(last.data).toBe(inputs[249]!.data);
    expect(last.attester).toEqual(attesters[1]);

    const toRevoke = [recorded[0]!.id, recorded[200]!.id, recorded[1]!.id];
    await revokeAttestations(devnet, toRevoke);
    for (const id of toRevoke) expect((await getAttestation(devnet, id)).revocationTime).toBeGreaterThan(0n);
    expect((await getAttestation(devnet, recorded[2]!.id)).revocationTime).toBe(0n);
  });
});

describe("chain control", () => {
  it("mines blocks and reverts to a snapshot", async () => {
    const start = await blockNumber(devnet);
    const id = await snapshot(devnet);
    await mine(devnet, 5);
    expect(await blockNumber(devnet)).toBe(start + 5n);
    await revert(devnet, id);
    expect(await blockNumber(devnet)).toBe(start);
    await expect(revert(devnet, id)).rejects.toThrow(/does not exist/);
  });

  it("with blockIntervalSeconds, keeps producing blocks with no transaction, and mines transactions too", async () => {
    const live = await startDevnet({ port: 0, usdcAccounts: 1, blockIntervalSeconds: 1 });
    try {
      const start = await blockNumber(live);
      await new Promise((r) => setTimeout(r, 3_500));
      const idle = await blockNumber(live);
      expect(idle).toBeGreaterThanOrEqual(start + 2n);
      const sent = await registerSchema(live, { name: "Live", schema: "bytes data" });
      expect(sent.blockNumber).toBeGreaterThan(idle);
    } finally {
      await live.stop();
    }
  }, 60_000);
});

describe("test USDC (EIP-3009)", () => {
  const usdc = () => ({ address: devnet.addresses.usdc, abi: ABIs.usdc }) as const;

  async function authorization(
    fromIndex: number,
    to: `0x${string}`,
    value: bigint,
    nonce: Hex,
    primaryType = "TransferWithAuthorization",
  ) {
    const signer = privateKeyToAccount(devnet.accounts[fromIndex]!.privateKey);
    const message = { from: signer.address, to, value, validAfter: 0n, validBefore: 4_000_000_000n, nonce };
    const signature = await signer.signTypedData({
      domain: { name: "USD Coin", version: "2", chainId: 45056, verifyingContract: devnet.addresses.usdc },
      types: {
        [primaryType]: [
          { name: "from", type: "address" },
          { name: "to", type: "address" },
          { name: "value", type: "uint256" },
          { name: "validAfter", type: "uint256" },
          { name: "validBefore", type: "uint256" },
          { name: "nonce", type: "bytes32" },
        ],
      },
      primaryType: primaryType as "TransferWithAuthorization",
      message,
    });
    return { message, signature };
  }

  it("has USDC's name, version and decimals", async () => {
    expect(await devnet.client.readContract({ ...usdc(), functionName: "name" })).toBe("USD Coin");
    expect(await devnet.client.readContract({ ...usdc(), functionName: "version" })).toBe("2");
    expect(await devnet.client.readContract({ ...usdc(), functionName: "decimals" })).toBe(6);
  });

  it("settles transferWithAuthorization with a bytes signature and with v, r, s, once per nonce", async () => {
    const payee = devnet.accounts[12]!.address;
    const relayer = devnet.accounts[0]!.address;
    const first = await authorization(2, payee, 1_500_000n, keccak256(stringToHex("nonce-1")));
    const { message: m1 } = first;
    await devnet.client.writeContract({
      ...usdc(),
      functionName: "transferWithAuthorization",
      args: [m1.from, m1.to, m1.value, m1.validAfter, m1.validBefore, m1.nonce, first.signature],
      account: relayer,
    });
    expect(
      await devnet.client.readContract({
        ...usdc(),
        functionName: "authorizationState",
        args: [m1.from, m1.nonce],
      }),
    ).toBe(true);

    const second = await authorization(2, payee, 500_000n, keccak256(stringToHex("nonce-2")));
    const { v, r, s } = parseSignature(second.signature);
    const { message: m2 } = second;
    await devnet.client.writeContract({
      ...usdc(),
      functionName: "transferWithAuthorization",
      args: [m2.from, m2.to, m2.value, m2.validAfter, m2.validBefore, m2.nonce, Number(v), r, s],
      account: relayer,
    });
    expect(await devnet.client.readContract({ ...usdc(), functionName: "balanceOf", args: [payee] })).toBe(
      2_000_000n,
    );

    await expect(
      devnet.client.writeContract({
        ...usdc(),
        functionName: "transferWithAuthorization",
        args: [m1.from, m1.to, m1.value, m1.validAfter, m1.validBefore, m1.nonce, first.signature],
        account: relayer,
      }),
    ).rejects.toThrow(/authorization is used or canceled/);
    const forged = await authorization(3, payee, 1n, keccak256(stringToHex("nonce-3")));
    await expect(
      devnet.client.writeContract({
        ...usdc(),
        functionName: "transferWithAuthorization",
        args: [m1.from, m1.to, 1n, 0n, 4_000_000_000n, forged.message.nonce, forged.signature],
        account: relayer,
      }),
    ).rejects.toThrow(/invalid signature/);
  });

  it("lets only the payee submit receiveWithAuthorization", async () => {
    const payee = devnet.accounts[13]!.address;
    const { message: m, signature } = await authorization(
      4,
      payee,
      7n,
      keccak256(stringToHex("receive-1")),
      "ReceiveWithAuthorization",
    );
    const args = [m.from, m.to, m.value, m.validAfter, m.validBefore, m.nonce, signature] as const;
    await expect(
      devnet.client.writeContract({
        ...usdc(),
        functionName: "receiveWithAuthorization",
        args,
        account: devnet.accounts[0]!.address,
      }),
    ).rejects.toThrow(/caller must be the payee/);
    await devnet.client.writeContract({
      ...usdc(),
      functionName: "receiveWithAuthorization",
      args,
      account: payee,
    });
    expect(await devnet.client.readContract({ ...usdc(), functionName: "balanceOf", args: [payee] })).toBe(
      7n,
    );
  });
});

describe("seedDemo", () => {
  it("pairs humans with agents under AgentOwnership, with DIDs and iden3 IDs derived from their addresses", async () => {
    const id = await snapshot(devnet);
    const seed = await seedDemo(devnet);
    expect((await getSchema(devnet, seed.schemas.agentOwnership)).name).toBe("AgentOwnership");
    expect((await getSchema(devnet, seed.schemas.review)).schema).toBe("uint8 stars,string comment");
    expect(seed.pairings).toHaveLength(4);
    for (const pairing of seed.pairings) {
      const onChain = await getAttestation(devnet, pairing.id);
      for (const party of [onChain.attester, onChain.recipient]) {
        expect(party.did).toBe(didFromAddress(party.ethereumAddress, "main"));
        expect(party.did).toMatch(/^did:iden3:billions:main:/);
        expect(party.iden3Id.toString()).toBe(iden3IdFromAddress(party.ethereumAddress, "main"));
      }
      expect(onChain.schemaId).toBe(seed.schemas.agentOwnership);
      expect(onChain.expirationTime).toBe(0n);
      expect(onChain.revocable).toBe(false);
      expect(onChain.data).toBe(encodeSchemaData("bytes data", ["0x"]));
    }
    expect(seed.reviews[0]).toMatchObject({ stars: 5 });
    expect((await seedDemo(devnet)).schemas).toEqual(seed.schemas);
    await revert(devnet, id);
  });
});

describe("stop", () => {
  it("leaves no process behind", async () => {
    const other = await startDevnet({ accounts: 2, usdcAccounts: 0 });
    expect(hardhatChildren().length).toBeGreaterThanOrEqual(2);
    await other.stop();
    await expect(fetch(other.rpcUrl, { method: "POST" })).rejects.toThrow();
    expect(hardhatChildren()).toHaveLength(1);
  });
});
