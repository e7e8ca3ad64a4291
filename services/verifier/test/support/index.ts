// The iden3 test vectors and settings the verifier's tests run on, for bench/verifier. Sources only (under the
// @humanpass/source condition): test support is not part of the compiled package.
export { ANY_PROOF_AGE_MS, FIXTURE_CONTEXTS_DIR, latestStateResolvers, stable } from "./fixtures.ts";
export { testSettings } from "./settings.ts";
