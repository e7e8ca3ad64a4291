import {
  type HTTPAdapter,
  type HTTPProcessResult,
  type HTTPRequestContext,
  type HTTPTransportContext,
  type PaywallConfig,
  type RoutesConfig,
  x402HTTPResourceServer,
  type x402ResourceServer,
} from "@x402/core/server";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { settleBeforeHandlerUnlessGet } from "./settle-before-handler.ts";

export interface PublicHTTPResourceServerOptions {
  /** Where clients reach this server (origin, and path prefix if any): the origin of every resource URL. */
  publicUrl: string;
  /**
   * Routes of other methods than `GET` settle before their handler (`settleBeforeHandlerUnlessGet`): default
   * true. False leaves every route's flow as its tiers say (x402's default: after the handler).
   */
  settleBeforeHandlerUnlessGet?: boolean;
}

/** The path and query of the URL an adapter reports, or its path alone when that URL does not parse. */
function pathAndQuery(adapter: HTTPAdapter): string {
  const reported = adapter.getUrl();
  if (!URL.canParse(reported)) return adapter.getPath();
  const { pathname, search } = new URL(reported);
  return `${pathname}${search}`;
}

/** `adapter` with its URL's origin replaced by `publicUrl`: the `Host` a caller sends no longer names the site. */
function pinnedToPublicUrl(adapter: HTTPAdapter, publicUrl: string): HTTPAdapter {
  const base = publicUrl.replace(/\/+$/, "");
  return {
    getHeader: (name) => adapter.getHeader(name),
    getMethod: () => adapter.getMethod(),
    getPath: () => adapter.getPath(),
    getUrl: () => `${base}${pathAndQuery(adapter)}`,
    getAcceptHeader: () => adapter.getAcceptHeader(),
    getUserAgent: () => adapter.getUserAgent(),
    getQueryParams: adapter.getQueryParams && (() => adapter.getQueryParams?.() ?? {}),
    getQueryParam: adapter.getQueryParam && ((name) => adapter.getQueryParam?.(name)),
    getBody: adapter.getBody && (() => adapter.getBody?.()),
  };
}

/** HEAD is answered by the GET handler (Express, Hono and Fastify all do), so it is priced as GET. */
function asServed(context: HTTPRequestContext, publicUrl: string): HTTPRequestContext {
  return {
    ...context,
    method: context.method.toUpperCase() === "HEAD" ? "GET" : context.method,
    adapter: pinnedToPublicUrl(context.adapter, publicUrl),
  };
}

/**
 * x402's HTTP resource server with safe defaults, for any middleware (`@x402/express`, `@x402/hono`: give it to
 * their `paymentMiddlewareFromHTTPServer`; `installPaymentGate` of `@humanpass/x402-fastify`). Every resource
 * URL, and so every human-proof challenge's `domain` and `uri`, has `publicUrl`'s origin whatever `Host` says;
 * `HEAD` on a route keyed `GET` costs what `GET` costs instead of being served free; and routes of other methods
 * settle before their handler, so that a handler with side effects never runs unpaid.
 */
export class PublicHTTPResourceServer extends x402HTTPResourceServer {
  readonly #publicUrl: string;

  constructor(server: x402ResourceServer, routes: RoutesConfig, options: PublicHTTPResourceServerOptions) {
    super(
      server,
      options.settleBeforeHandlerUnlessGet === false ? routes : settleBeforeHandlerUnlessGet(routes),
    );
    if (!URL.canParse(options.publicUrl) || !/^https?:$/.test(new URL(options.publicUrl).protocol)) {
      throw new TypeError(`publicUrl must be an http(s) URL, got "${options.publicUrl}"`);
    }
    this.#publicUrl = options.publicUrl;
  }

  override requiresPayment(context: HTTPRequestContext): boolean {
    return super.requiresPayment(asServed(context, this.#publicUrl));
  }

  override processHTTPRequest(
    context: HTTPRequestContext,
    paywallConfig?: PaywallConfig,
  ): Promise<HTTPProcessResult> {
    return super.processHTTPRequest(asServed(context, this.#publicUrl), paywallConfig);
  }

  override processSettlement(
    ...[payload, requirements, declared, transport, ...rest]: Parameters<
      x402HTTPResourceServer["processSettlement"]
    >
  ): ReturnType<x402HTTPResourceServer["processSettlement"]> {
    const served: HTTPTransportContext | undefined = transport && {
      ...transport,
      request: asServed(transport.request, this.#publicUrl),
    };
    return super.processSettlement(
      payload as PaymentPayload,
      requirements as PaymentRequirements,
      declared,
      served,
      ...rest,
    );
  }
}
