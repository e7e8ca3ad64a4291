import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** The signed terms a challenge nonce is bound to: a nonce issued for one of them is refused for any other. */
export type NonceTerms = { domain: string; uri: string; issuedAt: string };

/**
 * Challenge nonces that carry their own proof of origin, so that every instance of a server recognises the
 * nonces any of them issued, and no other server's, without storing them at issue time. Single use is the
 * `NonceStore`'s job (or `ProofAdmissions`'), once a proof has passed its checks.
 */
export interface ChallengeNonces {
  issue(terms: NonceTerms): string;
  /** Whether this server issued `nonce` for exactly these terms. */
  issued(nonce: string, terms: NonceTerms): boolean;
}

export type ChallengeNonceOptions = {
  /**
   * Secret keys shared by every instance: the first signs new nonces, every one is accepted, so a key is rotated
   * by putting the new one first and dropping the old one once the proof lifetime has passed. Default: one key
   * drawn for this process, which only that process recognises (one instance, development).
   */
  keys?: string[];
};

// 16 random bytes, as spec 3's SDK draws them, then 16 bytes of HMAC-SHA256 over them and the terms.
const RANDOM_BYTES = 16;
const MAC_BYTES = 16;
export const CHALLENGE_NONCE_PATTERN = new RegExp(`^[0-9a-f]{${2 * (RANDOM_BYTES + MAC_BYTES)}}$`);

/** Keys shorter than this are refused: a guessable key lets anyone mint nonces. */
export const MIN_NONCE_KEY_LENGTH = 32;

// Shared by every extension and hook created without keys in this process, so they recognise each other's nonces.
const processKey = randomBytes(32).toString("hex");

function mac(key: string, random: string, terms: NonceTerms): Buffer {
  // Lengths first, so no two different term lists give the same input.
  const fields = [random, terms.domain, terms.uri, terms.issuedAt];
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
    issue(terms) {
      const random = randomBytes(RANDOM_BYTES).toString("hex");
      return random + mac(signingKey, random, terms).toString("hex");
    },
    issued(nonce, terms) {
      if (!CHALLENGE_NONCE_PATTERN.test(nonce)) return false;
      const random = nonce.slice(0, 2 * RANDOM_BYTES);
      const presented = Buffer.from(nonce.slice(2 * RANDOM_BYTES), "hex");
      return keys.some((key) => timingSafeEqual(mac(key, random, terms), presented));
    },
  };
}
