// The peer bench's server (a): Billions' published server SDK on Express as its README wires it (x402's own
// `paymentMiddleware`, `configureHumanProofServer` with a `storage`, its verifier asking the attestations API).
// On @x402/core 2.27 its proofs need one workaround: x402's generic extension echo check (since 2.15) compares
// `extensions["human-proof"]`, which Billions' client sends as a JSON string, with the challenge's `info` and
// refuses every proof (`extension_echo_mismatch`); `HumanProofResourceServer` is the x402ResourceServer that
// leaves that one echo to the hook and changes nothing else. Uses are counted in this process's memory, the
// only storage the SDK's example has (it ships none).
import {
  configureHumanProofServer,
  createPoUVerifier,
  DEFAULT_AGENT_OWNERSHIP_SCHEMA,
  declareHumanProofExtension,
} from "@billionsnetwork/x402-human-proof-server";
import { HumanProofResourceServer, InMemoryHumanUsageStorage } from "@humanpass/human-proof/server";
import { ExactEvmScheme } from "@x402/evm/exact/server";
import { paymentMiddleware } from "@x402/express";
import { benchRoutes, env, facilitator, listen } from "./express-app.ts";

const server = new HumanProofResourceServer(facilitator).register(env.network, new ExactEvmScheme());
configureHumanProofServer(server, {
  verifier: createPoUVerifier({
    attestationsApiBaseUrl: `${env.attestationsApiUrl}/api/v1/attestations`,
    nullifierApiBaseUrl: `${env.attestationsApiUrl}/api/v1/nullifier`,
  }),
  storage: new InMemoryHumanUsageStorage(),
});
const routes = benchRoutes(
  DEFAULT_AGENT_OWNERSHIP_SCHEMA,
  declareHumanProofExtension({ expirationSeconds: 900 }),
);
await listen(paymentMiddleware(routes, server));
