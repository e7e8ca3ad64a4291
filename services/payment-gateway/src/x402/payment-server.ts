import {
  type ChallengeNonces,
  configureHumanProofServer,
  declareHumanProofExtension,
  guardPayments,
  HUMAN_PROOF,
  type HumanProofEvent,
  HumanProofResourceServer,
  type PaymentReservations,
  type PoUVerifier,
  type ProofAdmissions,
  settleBeforeHandlerUnlessGet,
} from "@humanpass/human-proof";
import type { Logger } from "@humanpass/telemetry";
import { currentPaymentRequest } from "@humanpass/x402-fastify";
import {
  type FacilitatorClient,
  type RouteConfig,
  type RoutesConfig,
  x402HTTPResourceServer,
} from "@x402/core/server";
import type { Network } from "@x402/core/types";
import { convertToTokenAmount } from "@x402/core/utils";
import { ExactEvmScheme } from "@x402/evm/exact/server";
import type { PaymentEvents } from "../events/payment-events.ts";
import {
  type AssetConfig,
  OWNERSHIP_PLACEHOLDER,
  type PaidRouteConfig,
  type RoutesConfigFile,
  type TierConfig,
} from "../routes-file.ts";
import { refuseForgedAuthorizationBeforeLookup } from "./authorization-signature.ts";
import { registerPaymentEventHooks } from "./payment-event-hooks.ts";
import { humanIdOf, rememberHumanId } from "./request-humans.ts";

export interface PaymentServerOptions {
  routesFile: RoutesConfigFile;
  /** Receives payments of tiers without their own `payTo` (EVM_ADDRESS). */
  payTo: string;
  facilitator: FacilitatorClient;
  verifier: PoUVerifier;
  /** Takes each proof's nonce and use (per-human counters) and records its events; gives failed requests' uses back. */
  admissions: ProofAdmissions;
  maxProofAgeSeconds?: number;
  /** Issues and recognises human-proof challenge nonces; the same keys on every replica. Default: this process's. */
  challengeNonces?: ChallengeNonces;
  events: PaymentEvents;
  /** Claims each EIP-3009 authorization before the handler runs. */
  reservations: PaymentReservations;
  logger: Logger;
}

export function routeKey(route: Pick<PaidRouteConfig, "method" | "path">): string {
  return `${route.method} ${route.path}`;
}

export function networksOf(routesFile: RoutesConfigFile): Network[] {
  return [...new Set(routesFile.routes.flatMap((r) => r.accepts.map((t) => t.network as Network)))];
}

export function requiredAttestationsOf(tier: TierConfig): string[] {
  return tier.extra?.requiredAttestations ?? [];
}

/**
 * The x402 resource server of the gateway: the EVM `exact` scheme per network (dollar prices in the
 * configured token), the human-proof extension and hooks (quota in `storage`), and the payment events.
 */
export function createPaymentServer(options: PaymentServerOptions): x402HTTPResourceServer {
  const { routesFile, events, verifier } = options;
  const server = new HumanProofResourceServer(options.facilitator);
  for (const network of networksOf(routesFile)) {
    const scheme = new ExactEvmScheme();
    const asset = routesFile.assets[network];
    if (asset) scheme.registerMoneyParser(async (amount) => priceIn(asset, String(amount)));
    server.register(network, scheme);
  }

  // Before the human-proof hook: a payment that cannot pay, or that its payer did not sign, costs no registry lookup.
  guardPayments(server, {
    reservations: options.reservations,
    onReservationError: (error, during) =>
      options.logger[during === "reserve" ? "error" : "warn"](
        { err: (error as Error).message },
        during === "reserve"
          ? "payment reservation failed; payment refused"
          : "claim of an unverified payment could not be given back",
      ),
  });
  server.onBeforeVerify(refuseForgedAuthorizationBeforeLookup);
  configureHumanProofServer(server, {
    verifier,
    paymentGuards: false,
    admissions: options.admissions,
    maxProofAgeSeconds: options.maxProofAgeSeconds,
    challengeNonces: options.challengeNonces,
    extensionOptions: { agentOwnershipSchema: verifier.ownershipSchema },
    onEvent: rememberVerifiedHuman,
  });
  registerPaymentEventHooks(server, events, humanIdOf);

  return new x402HTTPResourceServer(
    server,
    buildRoutesConfig(routesFile, options.payTo, verifier.ownershipSchema),
  );
}

function priceIn(asset: AssetConfig, dollars: string) {
  return {
    amount: convertToTokenAmount(dollars, asset.decimals),
    asset: asset.address,
    extra: { name: asset.name, version: asset.version },
  };
}

export function buildRoutesConfig(
  routesFile: RoutesConfigFile,
  payTo: string,
  ownershipSchema: string,
): RoutesConfig {
  const routes: Record<string, RouteConfig> = {};
  for (const route of routesFile.routes) {
    const accepts = route.accepts.map((tier) => {
      const extra: Record<string, unknown> = { ...tier.extra };
      const required = requiredAttestationsOf(tier).map((id) =>
        id === OWNERSHIP_PLACEHOLDER ? ownershipSchema : id,
      );
      if (tier.extra?.requiredAttestations) extra.requiredAttestations = required;
      return {
        scheme: tier.scheme,
        network: tier.network as Network,
        payTo: tier.payTo ?? payTo,
        price:
          typeof tier.price === "string"
            ? tier.price
            : withTokenDomain(tier.price, routesFile.assets[tier.network]),
        ...(tier.maxTimeoutSeconds ? { maxTimeoutSeconds: tier.maxTimeoutSeconds } : {}),
        extra,
      };
    });
    const gated = route.accepts.some((tier) => requiredAttestationsOf(tier).length > 0);
    routes[routeKey(route)] = {
      description: route.description,
      mimeType: route.mimeType,
      accepts,
      ...(route.humanProof || gated
        ? { extensions: { [HUMAN_PROOF]: declareHumanProofExtension(route.humanProof ?? {}) } }
        : {}),
    };
  }
  // A route of another method than GET settles before its handler: whatever it does upstream is paid for.
  return settleBeforeHandlerUnlessGet(routes);
}

/** An exact token amount of the configured token gets that token's EIP-712 domain, which EIP-3009 signing needs. */
function withTokenDomain(price: Exclude<TierConfig["price"], string>, asset: AssetConfig | undefined) {
  if (!asset || asset.address.toLowerCase() !== price.asset.toLowerCase())
    return { ...price, extra: price.extra ?? {} };
  return { ...price, extra: { name: asset.name, version: asset.version, ...price.extra } };
}

/** The admission recorded the events; the payment's own events (settled, failed) name the human found here. */
function rememberVerifiedHuman(event: HumanProofEvent): void {
  if (event.type !== "human_verified") return;
  const request = currentPaymentRequest();
  if (request) rememberHumanId(request, event.humanId);
}
