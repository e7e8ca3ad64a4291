import { describe, expect, it } from "vitest";
import { beta1, stable } from "../../test/support/fixtures.ts";
import { jsJwz, jsSdk } from "./iden3-modules.ts";
import {
  NodeCryptoHashToken,
  NodeCryptoHashZkpPacker,
  useNodeCryptoForJwzMessageHash,
} from "./jwz-message-hash.ts";

describe("JWZ message hash through node:crypto", () => {
  it("equals js-jwz's own hash for the fixture tokens, on every call", async () => {
    for (const compact of [stable.token, beta1.token]) {
      const parsed = await jsJwz.Token.parse(compact);
      const expected = await parsed.getMessageHash();
      const token = NodeCryptoHashToken.from(parsed);
      expect(await token.getMessageHash()).toEqual(expected);
      (await token.getMessageHash()).reverse();
      expect(await token.getMessageHash()).toEqual(expected);
      expect(token.serializeHeaders()).toBe(parsed.serializeHeaders());
      expect([token.alg, token.circuitId, token.zkProof]).toEqual([
        parsed.alg,
        parsed.circuitId,
        parsed.zkProof,
      ]);
    }
  });

  it("follows a change of the token's header instead of answering from its memo", async () => {
    const parsed = await jsJwz.Token.parse(stable.token);
    const token = NodeCryptoHashToken.from(parsed);
    const before = await token.getMessageHash();
    token.setHeader("x", "changed");
    parsed.setHeader("x", "changed");
    const after = await token.getMessageHash();
    expect(after).not.toEqual(before);
    expect(after).toEqual(await parsed.getMessageHash());
  });

  it("replaces the package manager's ZKP packer, keeping its verification parameters", () => {
    const packageManager = new jsSdk.PackageManager();
    expect(() => useNodeCryptoForJwzMessageHash(packageManager)).toThrow(/no ZKP packer/);
    const verificationParams = new Map([["groth16:authV3", { key: new Uint8Array([1]) }]]);
    packageManager.registerPackers([new jsSdk.ZKPPacker(new Map(), verificationParams as never)]);
    useNodeCryptoForJwzMessageHash(packageManager);
    const packer = packageManager.packers.get(jsSdk.PROTOCOL_CONSTANTS.MediaType.ZKPMessage);
    expect(packer).toBeInstanceOf(NodeCryptoHashZkpPacker);
    expect((packer as InstanceType<typeof NodeCryptoHashZkpPacker>).verificationParamsMap).toBe(
      verificationParams,
    );
  });
});
