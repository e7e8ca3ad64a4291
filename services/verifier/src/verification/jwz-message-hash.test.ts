import { describe, expect, it } from "vitest";
import { beta1, stable } from "../../test/support/fixtures.ts";
import { jsJwz } from "./iden3-modules.ts";
import { useNodeCryptoForJwzMessageHash } from "./jwz-message-hash.ts";

describe("JWZ message hash through node:crypto", () => {
  it("equals js-jwz's own hash for the fixture tokens, on every call", async () => {
    for (const compact of [stable.token, beta1.token]) {
      useNodeCryptoForJwzMessageHash(false);
      const expected = await (await jsJwz.Token.parse(compact)).getMessageHash();
      useNodeCryptoForJwzMessageHash(true);
      const token = await jsJwz.Token.parse(compact);
      expect(await token.getMessageHash()).toEqual(expected);
      expect(await token.getMessageHash()).toEqual(expected);
    }
  });

  it("follows a change of the token's header instead of answering from its memo", async () => {
    useNodeCryptoForJwzMessageHash(true);
    const token = await jsJwz.Token.parse(stable.token);
    const before = await token.getMessageHash();
    token.setHeader("x", "changed");
    const after = await token.getMessageHash();
    expect(after).not.toEqual(before);
    useNodeCryptoForJwzMessageHash(false);
    expect(await token.getMessageHash()).toEqual(after);
  });
});
