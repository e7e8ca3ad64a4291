import { createLogger } from "@humanpass/telemetry";
import type { VerifierSettings } from "../../src/config.ts";
import { VERIFIER_ENGINES, type VerifierEngine } from "../../src/verification/engine.ts";

export const logger = createLogger({ name: "verifier-test", level: process.env.TEST_LOG_LEVEL ?? "silent" });

export const testSettings: VerifierSettings = {
  hostUrl: "https://verifier.example.test",
  audienceDid: "did:iden3:billions:test:2VxnoiNqdMPyHMtUwAEzhnWqXGkEeJpAp4ntTkL8XT",
  allowedIssuers: [
    "did:iden3:billions:test:2VwqkgA2dNEwsnsm7hJTaCGVKFh8mSMBx5hkuxEh4F",
    "did:iden3:billions:main:issuer2",
  ],
  schemaContext: "ipfs://QmcUEDa42Er4nfNFmGQVjiNYFaik6kvNQjfTeBrdSx83At",
  nullifierSessionId: "12345",
  reason: "Proof of Uniqueness",
  sessionTtlMs: 15 * 60_000,
  sessionRetentionMs: 60 * 60_000,
  walletUrl: "https://wallet.example.test",
};

/** The one person behind every token in the multi-instance test (its verify step is a double). */
export const SAME_PERSON = {
  nullifier: "4242424242424242424242424242424242424242424242424242424242424242424242424",
  nullifierSessionId: testSettings.nullifierSessionId,
  userDid: "did:iden3:billions:test:2VxnoiNqdMPyHMtUwAEzhnWqXGkEeJpAp4ntTkL8XT",
  userId: "1",
};

/** The engine the tests verify with: `VERIFIER_ENGINE=single` (or `library`) runs them on another one. */
export const testEngine: VerifierEngine = (() => {
  const engine = process.env.VERIFIER_ENGINE ?? "batch";
  if (!(VERIFIER_ENGINES as readonly string[]).includes(engine)) {
    throw new Error(`VERIFIER_ENGINE=${engine}: expected one of ${VERIFIER_ENGINES.join(", ")}`);
  }
  return engine as VerifierEngine;
})();
