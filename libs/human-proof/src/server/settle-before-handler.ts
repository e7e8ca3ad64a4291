import type { PaymentOption } from "@x402/core/http";
import type { RouteConfig, RoutesConfig } from "@x402/core/server";

/**
 * The methods whose handler changes nothing: paid after the handler, so a client that is gone before the
 * response pays nothing (where the framework's middleware notices; see docs/sdk.md). `HEAD` is served by `GET`.
 */
const SAFE_METHODS = new Set(["GET", "HEAD"]);
const METHOD = /^([A-Za-z]+)\s+\S/;

function settlingBeforeHandler(option: PaymentOption): PaymentOption {
  // A tier that names its own flow keeps it.
  if (option.extra?.paymentFlow !== undefined) return option;
  return { ...option, extra: { ...option.extra, paymentFlow: "upfront" } };
}

function withFlow(route: RouteConfig, safe: boolean): RouteConfig {
  if (safe) return route;
  const accepts = Array.isArray(route.accepts)
    ? route.accepts.map(settlingBeforeHandler)
    : settlingBeforeHandler(route.accepts);
  return { ...route, accepts };
}

function isRouteConfig(routes: RoutesConfig): routes is RouteConfig {
  return "accepts" in routes && typeof routes.accepts === "object";
}

/**
 * `routes` with every tier of a route whose handler may change something settling before the handler (x402's
 * `upfront` flow, `extra.paymentFlow`): whatever the handler does is paid for, even when the client hangs up or
 * the handler fails. Routes keyed `GET` (or `HEAD`) keep x402's default, paid after the handler; a route keyed
 * without a method, or a single route config for every path, settles before, as any method may reach it.
 * `PublicHTTPResourceServer` applies it to the routes it is given.
 */
export function settleBeforeHandlerUnlessGet(routes: RoutesConfig): RoutesConfig {
  if (isRouteConfig(routes)) return withFlow(routes, false);
  return Object.fromEntries(
    Object.entries(routes).map(([key, route]) => {
      const method = METHOD.exec(key.trim())?.[1]?.toUpperCase();
      return [key, withFlow(route, method !== undefined && SAFE_METHODS.has(method))];
    }),
  );
}
