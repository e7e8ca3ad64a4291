import { ConfigError, loadConfig } from "@humanpass/config";
import { describe, expect, it } from "vitest";
import {
  isLoopbackHost,
  VerifierConfigError,
  VerifierEnv,
  verificationSettings,
  verifierSettings,
} from "./config.ts";

const env = {
  HOST_URL: "https://verifier.example.org/",
  AUDIENCE_DID: "did:iden3:billions:main:2VmAk7fGHQP5FN2jZ8X9Y1KGZ5bKtvWT4JHbZNzvEy",
  ALLOWED_ISSUER: "did:iden3:billions:main:issuerA, did:iden3:billions:test:issuerB",
  POU_SCHEMA_CONTEXT: "ipfs://QmcUEDa42Er4nfNFmGQVjiNYFaik6kvNQjfTeBrdSx83At",
  NULLIFIER_SESSION_ID: "98765432109876543210",
  BILLIONS_MAIN_RPC_URL: "https://rpc.billions.example",
  BILLIONS_MAIN_STATE_CONTRACT: "0x3C9acB2205Aa72A05F6D77d708b5Cf85FCa3a896",
};

describe("verifier configuration", () => {
  it("reads spec 1's variables with their defaults", () => {
    const config = loadConfig(VerifierEnv, env);
    const settings = verifierSettings(config);
    expect(config.PORT).toBe(8080);
    expect(config.IPFS_GATEWAY).toBe("https://ipfs.io");
    expect(settings).toMatchObject({
      hostUrl: "https://verifier.example.org",
      allowedIssuers: ["did:iden3:billions:main:issuerA", "did:iden3:billions:test:issuerB"],
      nullifierSessionId: "98765432109876543210",
      sessionTtlMs: 15 * 60_000,
    });
    expect(verificationSettings(config, "/bundled")).toEqual({
      networks: {
        "billions:main": {
          rpcUrl: env.BILLIONS_MAIN_RPC_URL,
          stateContract: env.BILLIONS_MAIN_STATE_CONTRACT,
        },
      },
      ipfsGateway: "https://ipfs.io",
      contextsDirs: ["/bundled"],
      proofMaxAgeMs: 86_400_000,
      workers: undefined,
      workerNiceness: 10,
      engine: "batch",
    });
  });

  it("chooses the verification engine: batch by default, single or library on request, nothing else", () => {
    expect(verificationSettings(loadConfig(VerifierEnv, env), "/b").engine).toBe("batch");
    for (const engine of ["single", "library"] as const) {
      const config = loadConfig(VerifierEnv, { ...env, VERIFIER_ENGINE: engine });
      expect(verificationSettings(config, "/b").engine).toBe(engine);
    }
    expect(() => loadConfig(VerifierEnv, { ...env, VERIFIER_ENGINE: "fast" })).toThrow(/VERIFIER_ENGINE/);
  });

  it("names the variable that is missing or malformed", () => {
    expect(() => loadConfig(VerifierEnv, { ...env, HOST_URL: undefined })).toThrow(/HOST_URL/);
    expect(() => loadConfig(VerifierEnv, { ...env, NULLIFIER_SESSION_ID: "0" })).toThrow(ConfigError);
    expect(() => loadConfig(VerifierEnv, { ...env, NULLIFIER_SESSION_ID: "-5" })).toThrow(
      /NULLIFIER_SESSION_ID/,
    );
    expect(() => loadConfig(VerifierEnv, { ...env, ALLOWED_ISSUER: "issuer" })).toThrow(/ALLOWED_ISSUER/);
    expect(() => loadConfig(VerifierEnv, { ...env, BILLIONS_TEST_STATE_CONTRACT: "0x12" })).toThrow(
      /BILLIONS_TEST_STATE_CONTRACT/,
    );
  });

  it("wants a network's RPC URL and state contract together", () => {
    const config = loadConfig(VerifierEnv, { ...env, BILLIONS_TEST_RPC_URL: "https://rpc.test.example" });
    expect(() => verificationSettings(config, "/bundled")).toThrow(VerifierConfigError);
  });

  it("recognises loopback hosts, which wallets cannot reach", () => {
    expect(isLoopbackHost("http://localhost:8080")).toBe(true);
    expect(isLoopbackHost("http://127.0.0.1:8080")).toBe(true);
    expect(isLoopbackHost("http://[::1]:8080")).toBe(true);
    expect(isLoopbackHost("https://verifier.example.org")).toBe(false);
  });
});
