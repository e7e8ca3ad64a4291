import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** What a challenge nonce is bound to: a nonce issued for one of them is refused for any other. */
export type NonceTerms = {
  domain: string;
  uri: string;
  /** What the nonce is for, when one server issues nonces for several uses (agent-auth's two claim paths). */
  purpose?: string;
};

/**
 * Challenge nonces that carry their issue time and their own proof of origin, so that every instance of a server
 * recognises the nonces any of them issued, and no other server's, without storing anything at issue time. Single
 * use is the `UsedNonceStore`'s job (or `ProofAdmissions`'), once a proof has passed its checks: only redeemed
 * nonces are ever stored.
 */
export interface ChallengeNonces {
  /** A fresh nonce for `terms`, issued at `issuedAt` (ms since the epoch), which the nonce carries. */
  issue(terms: NonceTerms, issuedAt: number): string;
  /** When this server issued `nonce` for exactly these terms (ms since the epoch), or undefined if it did not. */
  issuedAt(nonce: string, terms: NonceTerms): number | undefined;
}

export type ChallengeNonceOptions = {
  /**
   * Secret keys shared by every instance: the first signs new nonces, every one is accepted, so a key is rotated
   * by putting the new one first and dropping the old one once the proof lifetime has passed. Default: one key
   * drawn for this process, which only that process recognises (one instance, development).
   */
  keys?: string[];
};

// 16 bytes, the length of spec 3's nonces: the issue time in ms (6 bytes), 4 random bytes that tell apart the
// nonces of one millisecond, and 6 bytes of HMAC-SHA256 over both and the terms. A forged nonce is found only by
// online guessing (one request each), still needs the agent's signature, and carries a time that the lifetime
// bounds, so 48 bits of MAC are ample.
const TIME_BYTES = 6;
const RANDOM_BYTES = 4;
const MAC_BYTES = 6;
const HEAD_HEX = 2 * (TIME_BYTES + RANDOM_BYTES);
export const CHALLENGE_NONCE_PATTERN = new RegExp(`^[0-9a-f]{${HEAD_HEX + 2 * MAC_BYTES}}$`);

/** Keys shorter than this are refused: a guessable key lets anyone mint nonces. */
export const MIN_NONCE_KEY_LENGTH = 32;

// Shared by every extension and hook created without keys in this process, so they recognise each other's nonces.
const processKey = randomBytes(32).toString("hex");

function mac(key: string, head: string, terms: NonceTerms): Buffer {
  // Lengths first, so no two different term lists give the same input.
  const fields = [head, terms.domain, terms.uri, terms.purpose ?? ""];
  const input = fields.map((field) => `${field.length}:${field}`).join("\n");
  return createHmac("sha256", key).update(input).digest().subarray(0, MAC_BYTES);
}

export function createChallengeNonces(options: ChallengeNonceOptions = {}): ChallengeNonces {
  const keys = options.keys?.length ? options.keys : [processKey];
  for (const key of keys) {
    if (key.length < MIN_NONCE_KEY_LENGTH)
      throw new Error(`a challenge nonce key needs at least ${MIN_NONCE_KEY_LENGTH} characters`);
  }
  const signingKey = keys[0] as string;
  return {
    issue(terms, issuedAt) {
      const time = Buffer.alloc(TIME_BYTES);
      time.writeUIntBE(issuedAt, 0, TIME_BYTES);
      const head = time.toString("hex") + randomBytes(RANDOM_BYTES).toString("hex");
      return head + mac(signingKey, head, terms).toString("hex");
    },
    issuedAt(nonce, terms) {
      if (!CHALLENGE_NONCE_PATTERN.test(nonce)) return undefined;
      const head = nonce.slice(0, HEAD_HEX);
      const presented = Buffer.from(nonce.slice(HEAD_HEX), "hex");
      if (!keys.some((key) => timingSafeEqual(mac(key, head, terms), presented))) return undefined;
      return Buffer.from(head, "hex").readUIntBE(0, TIME_BYTES);
    },
  };
}
