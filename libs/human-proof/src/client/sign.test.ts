import { recoverMessageAddress } from "viem";
import { describe, expect, it } from "vitest";
import { account, CHAIN, challenge, RESOURCE } from "../../test/proof-fixtures.ts";
import { signHumanProofChallengeEVM, signHumanProofChallengeEVMUnchecked } from "./sign.ts";

const agent = account(1);
const forUs = { resourceUrl: RESOURCE };

describe("signHumanProofChallengeEVM", () => {
  it("signs the SIWE-style text and returns the proof JSON with every challenge field", async () => {
    const signed: string[] = [];
    const signer = {
      address: agent.address,
      signMessage: (message: string) => {
        signed.push(message);
        return agent.signMessage(message);
      },
    };
    const c = challenge({
      nonce: "abc123",
      issuedAt: "2026-11-22T00:00:00.000Z",
      expirationTime: "2026-11-22T00:15:00.000Z",
      statement: "Verify your agent is backed by a verified human",
    });
    const proof = JSON.parse(await signHumanProofChallengeEVM(c, signer, CHAIN, forUs));

    expect(signed).toEqual([
      `api.example.com wants you to sign in with your Ethereum account:
${agent.address}
Verify your agent is backed by a verified human

URI: https://api.example.com/weather?city=Oslo
Version: 1
Chain ID: eip155:45056
Nonce: abc123
Issued At: 2026-11-22T00:00:00.000Z
Expiration Time: 2026-11-22T00:15:00.000Z
Resources:
- https://api.example.com/weather?city=Oslo`,
    ]);
    expect(proof).toEqual({
      ...c.info,
      chainId: CHAIN,
      type: "eip191",
      address: agent.address,
      signature: proof.signature,
    });
    expect(await recoverMessageAddress({ message: signed[0], signature: proof.signature })).toBe(
      agent.address,
    );
  });

  it("leaves a blank line where there is no statement and omits absent optional lines", async () => {
    const signed: string[] = [];
    const c = challenge({ nonce: "n", issuedAt: "2026-11-22T00:00:00.000Z", resources: undefined });
    await signHumanProofChallengeEVM(
      c,
      {
        address: agent.address,
        signMessage: async (message) => {
          signed.push(message);
          return "0x";
        },
      },
      CHAIN,
      forUs,
    );
    expect(signed[0]).toBe(`api.example.com wants you to sign in with your Ethereum account:
${agent.address}

URI: https://api.example.com/weather?city=Oslo
Version: 1
Chain ID: eip155:45056
Nonce: n
Issued At: 2026-11-22T00:00:00.000Z`);
  });

  it("refuses a chain the challenge does not offer for eip191", async () => {
    await expect(signHumanProofChallengeEVM(challenge(), agent, "eip155:1", forUs)).rejects.toThrow(
      /eip155:1/,
    );
    const solanaOnly = { ...challenge(), supportedChains: [{ chainId: CHAIN, type: "ed25519" as const }] };
    await expect(signHumanProofChallengeEVM(solanaOnly, agent, CHAIN, forUs)).rejects.toThrow(/not offered/);
  });

  it("signs nothing without the URL the proof is for", async () => {
    const signed: string[] = [];
    const recording = {
      address: agent.address,
      signMessage: async (m: string) => {
        signed.push(m);
        return "0x";
      },
    };
    const sign = signHumanProofChallengeEVM as (...args: unknown[]) => Promise<string>;
    await expect(sign(challenge(), recording, CHAIN)).rejects.toThrow(/resourceUrl/);
    await expect(sign(challenge(), recording, CHAIN, {})).rejects.toThrow(/resourceUrl/);
    expect(signed).toEqual([]);
  });

  it("the unchecked variant signs a challenge for any site, as Billions' client does", async () => {
    const elsewhere = challenge({ uri: "https://gateway.example/api/v1/weather", domain: "gateway.example" });
    expect(JSON.parse(await signHumanProofChallengeEVMUnchecked(elsewhere, agent, CHAIN))).toMatchObject({
      domain: "gateway.example",
      address: agent.address,
    });
  });

  it("refuses a challenge for another uri or domain than the URL the proof is for", async () => {
    expect(await signHumanProofChallengeEVM(challenge(), agent, CHAIN, forUs)).toContain(agent.address);
    const elsewhere = challenge({ uri: "https://gateway.example/api/v1/weather" });
    await expect(signHumanProofChallengeEVM(elsewhere, agent, CHAIN, forUs)).rejects.toThrow(/not for/);
    const otherDomain = challenge({ domain: "gateway.example" });
    await expect(signHumanProofChallengeEVM(otherDomain, agent, CHAIN, forUs)).rejects.toThrow(/domain/);
    const noUri = challenge({ uri: undefined });
    await expect(signHumanProofChallengeEVM(noUri, agent, CHAIN, forUs)).rejects.toThrow(/not for/);
  });
});
