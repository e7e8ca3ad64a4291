import { readFileSync } from "node:fs";
import { ConfigError } from "@humanpass/config";
import { type Static, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";

const Address = Type.String({ pattern: "^0x[0-9a-fA-F]{40}$" });
const SchemaId = Type.String({
  pattern: "^(0x[0-9a-fA-F]{64}|\\$ownership)$",
  description: "a schema id, or $ownership",
});

/** Placeholder in `requiredAttestations` for the ownership schema the gateway is configured with. */
export const OWNERSHIP_PLACEHOLDER = "$ownership";

export const Asset = Type.Object(
  {
    address: Address,
    /** EIP-712 domain of the token (EIP-3009 signatures): name and version. */
    name: Type.String({ minLength: 1 }),
    version: Type.String({ minLength: 1 }),
    decimals: Type.Integer({ minimum: 0, maximum: 36 }),
  },
  { additionalProperties: false },
);

export const TierExtra = Type.Object(
  {
    requiredAttestations: Type.Optional(Type.Array(SchemaId)),
    maxUse: Type.Optional(Type.Integer({ minimum: 1 })),
    scope: Type.Optional(Type.String({ minLength: 1 })),
  },
  { additionalProperties: true },
);

export const Tier = Type.Object(
  {
    scheme: Type.Literal("exact"),
    /** Dollars (`"$0.01"`, converted with the network's asset) or an exact amount of a token. */
    price: Type.Union([
      Type.String({ pattern: "^\\$?[0-9]+(\\.[0-9]+)?$" }),
      Type.Object({
        amount: Type.String({ pattern: "^[0-9]+$" }),
        asset: Address,
        extra: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
      }),
    ]),
    network: Type.String({ pattern: "^eip155:[0-9]+$" }),
    /** Default: EVM_ADDRESS. */
    payTo: Type.Optional(Address),
    maxTimeoutSeconds: Type.Optional(Type.Integer({ minimum: 1 })),
    extra: Type.Optional(TierExtra),
  },
  { additionalProperties: false },
);

export const HumanProofOptions = Type.Object(
  {
    statement: Type.Optional(Type.String()),
    expirationSeconds: Type.Optional(Type.Integer({ minimum: 1 })),
    resourceUri: Type.Optional(Type.String()),
    domain: Type.Optional(Type.String()),
    version: Type.Optional(Type.String()),
    network: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])),
    /** Lets a payer other than the proof's signer take the human tier; default false. */
    payerMayDifferFromSigner: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const PaidRoute = Type.Object(
  {
    method: Type.Union(
      ["GET", "POST", "PUT", "PATCH", "DELETE"].map((m) => Type.Literal(m)),
      { default: "GET" },
    ),
    path: Type.String({ pattern: "^/" }),
    description: Type.String(),
    mimeType: Type.String(),
    accepts: Type.Array(Tier, { minItems: 1 }),
    /** Declares the human-proof challenge; implied by any tier with `requiredAttestations`. */
    humanProof: Type.Optional(HumanProofOptions),
    /** Forward paid requests here (query string appended); otherwise a built-in demo resource answers. */
    upstream: Type.Optional(
      Type.Object(
        {
          url: Type.String({ pattern: "^https?://" }),
          timeoutMs: Type.Optional(Type.Integer({ minimum: 1 })),
        },
        { additionalProperties: false },
      ),
    ),
    demo: Type.Optional(Type.Object({ body: Type.Unknown() }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);

export const RoutesFile = Type.Object(
  {
    /** Token used for dollar prices, per CAIP-2 network. */
    assets: Type.Record(Type.String({ pattern: "^eip155:[0-9]+$" }), Asset, { default: {} }),
    routes: Type.Array(PaidRoute),
  },
  { additionalProperties: false },
);

/** x402 keys of a tier's `extra` that the gateway decides itself, with the reason a routes file may not set them. */
const GATEWAY_EXTRA: Record<string, string> = {
  assetTransferMethod: "tiers are paid with EIP-3009 authorizations only (Permit2 payments are refused)",
  paymentFlow: "set from the route's method: GET settles after the handler, every other method before it",
};

export type AssetConfig = Static<typeof Asset>;
export type TierConfig = Static<typeof Tier>;
export type PaidRouteConfig = Static<typeof PaidRoute>;
export type RoutesConfigFile = Static<typeof RoutesFile>;

/** Parses and checks a routes document; every problem names where it is. */
export function parseRoutesFile(value: unknown, source = "ROUTES_FILE"): RoutesConfigFile {
  const withDefaults = Value.Default(RoutesFile, structuredClone(value));
  const problems = [...Value.Errors(RoutesFile, withDefaults)].map((e) => ({
    variable: source,
    message: `${e.path || "/"}: ${e.message}`,
  }));
  const parsed = withDefaults as RoutesConfigFile;
  if (problems.length === 0) {
    const seen = new Set<string>();
    parsed.routes.forEach((route, i) => {
      const key = `${route.method} ${route.path}`;
      if (seen.has(key))
        problems.push({ variable: source, message: `/routes/${i}: ${key} is configured twice` });
      seen.add(key);
      if (route.upstream && route.demo)
        problems.push({ variable: source, message: `/routes/${i}: set upstream or demo, not both` });
      route.accepts.forEach((tier, j) => {
        if (typeof tier.price === "string" && !parsed.assets[tier.network]) {
          problems.push({
            variable: source,
            message: `/routes/${i}/accepts/${j}: a dollar price needs assets["${tier.network}"]`,
          });
        }
        for (const [key, why] of Object.entries(GATEWAY_EXTRA)) {
          if (tier.extra && key in tier.extra)
            problems.push({ variable: source, message: `/routes/${i}/accepts/${j}/extra/${key}: ${why}` });
        }
      });
    });
  }
  if (problems.length > 0) throw new ConfigError(problems.slice(0, 10));
  return parsed;
}

export function loadRoutesFile(path: string): RoutesConfigFile {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new ConfigError([
      { variable: "ROUTES_FILE", message: `cannot read ${path}: ${(e as Error).message}` },
    ]);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new ConfigError([
      { variable: "ROUTES_FILE", message: `${path} is not JSON: ${(e as Error).message}` },
    ]);
  }
  return parseRoutesFile(json, `ROUTES_FILE (${path})`);
}
