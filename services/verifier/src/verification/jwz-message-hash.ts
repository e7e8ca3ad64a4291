import { createHash } from "node:crypto";
import { SCALAR_FIELD_ORDER } from "./groth16-mcl.ts";
import { jsCrypto, jsIden3Core, jsJwz } from "./iden3-modules.ts";

type Token = InstanceType<typeof jsJwz.Token>;
/** The parsed token's field that js-jwz hashes with its headers; `raw` is private in its typings. */
type TokenInternals = { raw: { payload: Uint8Array } };

const libraryGetMessageHash = jsJwz.Token.prototype.getMessageHash;
const hashed = new WeakMap<Token, { message: string; hash: Uint8Array }>();

/**
 * js-jwz's message hash, Poseidon(SHA-256(`base64url(header).base64url(payload)`) read little-endian, mod r), with
 * SHA-256 and base64url from node:crypto and Buffer instead of pure JavaScript (@noble/hashes, rfc4648),
 * and computed once per token: js-jwz asks for it to check the auth proof, js-sdk again to check the sender.
 */
export async function jwzMessageHash(this: Token): Promise<Uint8Array> {
  const headers = Buffer.from(this.serializeHeaders(), "utf8").toString("base64url");
  const payload = (this as unknown as TokenInternals).raw.payload;
  const message = `${headers}.${Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString("base64url")}`;
  const known = hashed.get(this);
  if (known?.message === message) return known.hash.slice();
  const digest = createHash("sha256").update(message, "utf8").digest();
  const reduced = BigInt(`0x${Buffer.from(digest.reverse()).toString("hex")}`) % SCALAR_FIELD_ORDER;
  const hash = jsIden3Core.toBigEndian(jsCrypto.poseidon.hash([reduced]), 32);
  hashed.set(this, { message, hash });
  return hash.slice();
}

/** Like the proving methods, js-jwz's Token class is one per thread: this switches every token of the thread. */
export function useNodeCryptoForJwzMessageHash(enabled: boolean): void {
  jsJwz.Token.prototype.getMessageHash = enabled ? jwzMessageHash : libraryGetMessageHash;
}
