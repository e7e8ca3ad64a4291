import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export type Iden3Auth = typeof import("@iden3/js-iden3-auth");
export type JsSdk = typeof import("@0xpolygonid/js-sdk");
export type JsJwz = typeof import("@iden3/js-jwz");
export type JsCrypto = typeof import("@iden3/js-crypto");
export type JsIden3Core = typeof import("@iden3/js-iden3-core");

interface Iden3Modules {
  iden3Auth: Iden3Auth;
  jsSdk: JsSdk;
  jsJwz: JsJwz;
  jsCrypto: JsCrypto;
  jsIden3Core: JsIden3Core;
}

/**
 * @iden3/js-iden3-auth is CommonJS and depends on its own copy of @0xpolygonid/js-sdk (1.39.4). Registries such as
 * js-jwz's proving methods are per module instance, so everything we plug in must come from the exact instances
 * the library itself requires, not from whatever an ESM import in this package would resolve to. The verifier's
 * own @0xpolygonid/js-sdk, a dev dependency at the same version, is for types only.
 */
const requireFromHere = createRequire(import.meta.url);
const authEntry = requireFromHere.resolve("@iden3/js-iden3-auth");

function requireOneByOne(): Iden3Modules {
  const requireFromAuth = createRequire(authEntry);
  const requireFromSdk = createRequire(requireFromAuth.resolve("@0xpolygonid/js-sdk"));
  return {
    iden3Auth: requireFromHere("@iden3/js-iden3-auth"),
    jsSdk: requireFromAuth("@0xpolygonid/js-sdk"),
    jsJwz: requireFromSdk("@iden3/js-jwz"),
    jsCrypto: requireFromSdk("@iden3/js-crypto"),
    jsIden3Core: requireFromSdk("@iden3/js-iden3-core"),
  };
}

// Beside the service's bundles, `make build` writes the same five instances, resolved the same way, as one
// CommonJS file (scripts/bundle.mjs): their ~1,200 files load in less time than one by one, which is most of
// what a verification thread does before the pool is ready. From the sources and tsc's dist/, one by one.
const prebundled = fileURLToPath(new URL("./iden3.cjs", import.meta.url));
const modules: Iden3Modules = existsSync(prebundled) ? requireFromHere(prebundled) : requireOneByOne();

export const iden3Auth: Iden3Auth = modules.iden3Auth;
export const jsSdk: JsSdk = modules.jsSdk;
export const jsJwz: JsJwz = modules.jsJwz;
export const jsCrypto: JsCrypto = modules.jsCrypto;
export const jsIden3Core: JsIden3Core = modules.jsIden3Core;

/** Verification keys shipped inside @iden3/js-iden3-auth (`circuits/<id>/verification_key.json`). */
export const libraryCircuitsDir = join(dirname(authEntry), "..", "..", "..", "circuits");
