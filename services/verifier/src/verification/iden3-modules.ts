import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/**
 * @iden3/js-iden3-auth is CommonJS and depends on its own copy of @0xpolygonid/js-sdk (1.39.4). Registries such as
 * js-jwz's proving methods are per module instance, so everything we plug in must come from the exact instances
 * the library itself requires, not from whatever an ESM import in this package would resolve to.
 */
const requireFromHere = createRequire(import.meta.url);
const authEntry = requireFromHere.resolve("@iden3/js-iden3-auth");
const requireFromAuth = createRequire(authEntry);
const sdkEntry = requireFromAuth.resolve("@0xpolygonid/js-sdk");
const requireFromSdk = createRequire(sdkEntry);

export type Iden3Auth = typeof import("@iden3/js-iden3-auth");
export type JsSdk = typeof import("@iden3/js-iden3-auth/node_modules/@0xpolygonid/js-sdk");
export type JsJwz = typeof import("@iden3/js-jwz");
export type JsCrypto = typeof import("@iden3/js-crypto");
export type JsIden3Core = typeof import("@iden3/js-iden3-core");

export const iden3Auth: Iden3Auth = requireFromHere("@iden3/js-iden3-auth");
export const jsSdk: JsSdk = requireFromAuth("@0xpolygonid/js-sdk");
export const jsJwz: JsJwz = requireFromSdk("@iden3/js-jwz");
export const jsCrypto: JsCrypto = requireFromSdk("@iden3/js-crypto");
export const jsIden3Core: JsIden3Core = requireFromSdk("@iden3/js-iden3-core");

/** Verification keys shipped inside @iden3/js-iden3-auth (`circuits/<id>/verification_key.json`). */
export const libraryCircuitsDir = join(dirname(authEntry), "..", "..", "..", "circuits");
