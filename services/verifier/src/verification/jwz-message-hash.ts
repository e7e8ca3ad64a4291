import { createHash } from "node:crypto";
import type { PackageManager } from "@0xpolygonid/js-sdk";
import type { Token } from "@iden3/js-jwz";
import { SCALAR_FIELD_ORDER } from "./groth16-mcl.ts";
import { jsCrypto, jsIden3Core, jsJwz, jsSdk } from "./iden3-modules.ts";

/**
 * A parsed JWZ whose message hash, Poseidon(SHA-256(`base64url(header).base64url(payload)`) read little-endian,
 * mod r), takes SHA-256 and base64url from node:crypto and Buffer instead of pure JavaScript (@noble/hashes,
 * rfc4648), and is computed once per header: js-jwz asks for it to check the auth proof, js-sdk again to check
 * the sender.
 */
export class NodeCryptoHashToken extends jsJwz.Token {
  private payloadBase64url?: string;
  private hashed?: { headers: string; hash: Uint8Array };

  /** The same token as js-jwz parsed it: its payload, headers, algorithm, circuit and proof. */
  static from(parsed: Token): NodeCryptoHashToken {
    const token = new NodeCryptoHashToken(parsed.method, parsed.getPayload());
    token.alg = parsed.alg;
    token.circuitId = parsed.circuitId;
    token.zkProof = parsed.zkProof;
    for (const [key, value] of Object.entries(JSON.parse(parsed.serializeHeaders())))
      token.setHeader(key, value);
    return token;
  }

  override async getMessageHash(): Promise<Uint8Array> {
    const headers = this.serializeHeaders();
    if (this.hashed?.headers !== headers) {
      // js-jwz keeps the payload as the UTF-8 encoding of this very string.
      this.payloadBase64url ??= Buffer.from(this.getPayload(), "utf8").toString("base64url");
      const message = `${Buffer.from(headers, "utf8").toString("base64url")}.${this.payloadBase64url}`;
      const digest = createHash("sha256").update(message, "utf8").digest();
      const reduced = BigInt(`0x${Buffer.from(digest.reverse()).toString("hex")}`) % SCALAR_FIELD_ORDER;
      this.hashed = { headers, hash: jsIden3Core.toBigEndian(jsCrypto.poseidon.hash([reduced]), 32) };
    }
    // Callers may reverse it in place (js-sdk's sender check does).
    return this.hashed.hash.slice();
  }
}

/** js-sdk's ZKP packer, through its protected `parseToken` hook, with tokens hashed by node:crypto. */
export class NodeCryptoHashZkpPacker extends jsSdk.ZKPPacker {
  protected override async parseToken(msg: Uint8Array): Promise<Token> {
    return NodeCryptoHashToken.from(await super.parseToken(msg));
  }
}

/**
 * Replaces the ZKP packer that js-iden3-auth's `setupAuthZKPPacker` registered in this package manager with one
 * that has the same verification keys and state checks and hashes through node:crypto.
 */
export function useNodeCryptoForJwzMessageHash(packageManager: PackageManager): void {
  const library = packageManager.packers.get(jsSdk.PROTOCOL_CONSTANTS.MediaType.ZKPMessage);
  if (!(library instanceof jsSdk.ZKPPacker)) throw new Error("no ZKP packer to replace: set it up first");
  packageManager.registerPackers([
    new NodeCryptoHashZkpPacker(library.provingParamsMap, library.verificationParamsMap),
  ]);
}
