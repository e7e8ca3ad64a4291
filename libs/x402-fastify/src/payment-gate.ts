import { AsyncLocalStorage } from "node:async_hooks";
import { Readable } from "node:stream";
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  decodePaymentSignatureHeader,
} from "@x402/core/http";
import * as x402Server from "@x402/core/server";
import {
  getFacilitatorResponseError,
  type HTTPProcessResult,
  type HTTPRequestContext,
  type HTTPResponseInstructions,
  type HTTPTransportContext,
  type PaywallConfig,
  type PaywallProvider,
  SETTLEMENT_OVERRIDES_HEADER,
  withPrivateCacheControl,
  type x402HTTPResourceServer,
} from "@x402/core/server";
import type { PaymentRequirements, SettleResponse } from "@x402/core/types";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { FastifyHTTPAdapter } from "./adapter.ts";

/**
 * An error that no retry will cure. `isFatalStartupInitError` came with @x402/core 2.25 (with the facilitator
 * capability check); on 2.23 and 2.24, the bottom of the peer range, a route configuration error is the only one.
 */
const isFatalStartupInitError: (error: unknown) => boolean =
  (x402Server as Partial<typeof x402Server>).isFatalStartupInitError ??
  ((error) => error instanceof x402Server.RouteConfigurationError);

type VerifiedResult = Extract<HTTPProcessResult, { type: "payment-verified" }>;

/** A payment that passed verification and waits for the handler's outcome. */
export interface VerifiedPayment {
  readonly result: VerifiedResult;
  readonly context: HTTPRequestContext;
  /** The settlement, once it succeeded. */
  settlement?: SettleResponse;
  /** Set by `onError`: the handler threw rather than answering with an error status. */
  handlerError?: unknown;
  finished: boolean;
}

declare module "fastify" {
  interface FastifyRequest {
    /** The verified x402 payment of this request, on routes that require one. */
    x402Payment: VerifiedPayment | null;
  }
}

export interface PaymentGateOptions {
  /** Resource server with its routes, schemes, extensions and hooks already registered. */
  httpServer: x402HTTPResourceServer;
  /**
   * Where clients reach this server (`https://pay.example.com`, or with a path prefix): the origin of every
   * resource URL, and so of the `uri` and `domain` of human-proof challenges. Never taken from `Host`.
   */
  publicUrl: string;
  /** Page for unpaid browsers (`Accept: text/html`); x402's built-in page when absent. */
  paywall?: PaywallProvider;
  paywallConfig?: PaywallConfig;
  /**
   * Ask the facilitator what it supports and check the routes against it now (default true). A bad route
   * configuration throws here; an unreachable facilitator is retried on the first paid request.
   */
  initialize?: boolean;
  /**
   * Refusal reasons that mean this server could not decide, not that the payment is wrong: answered `503` with
   * `Retry-After` (the terms stay in PAYMENT-REQUIRED) so that no client takes them for a final refusal. Default:
   * `verification_unavailable`, which spec 3 gives `503`.
   */
  unavailableReasons?: string[];
  /** Told how each paid request ends, how long settlements take and when the facilitator fails (metrics). */
  observer?: PaymentGateObserver;
}

/**
 * How a request that carried a payment ended: `settled` (charged), `refused` (the payment was not accepted; its
 * `reason` says why), `refunded` (verified, then cancelled because the handler failed: nothing charged),
 * `not_charged_disconnect` (verified, then cancelled because the client left before the response),
 * `settlement_failed` (the response was withheld), `unavailable` (the facilitator or a check could not decide).
 */
export type PaymentOutcome =
  | "settled"
  | "refused"
  | "refunded"
  | "not_charged_disconnect"
  | "settlement_failed"
  | "unavailable";

export interface PaymentGateObserver {
  /** `requirements`: the tier the payment was for, when known (verified, or named by the payment header). */
  outcome?(
    request: FastifyRequest,
    outcome: PaymentOutcome,
    detail: { requirements?: PaymentRequirements; reason?: string },
  ): void;
  /** A settlement call's duration, and whether it settled. */
  settlement?(seconds: number, settled: boolean): void;
}

/** The requirements a payment header says it pays, when it is readable. */
function requirementsNamedBy(paymentHeader: string | undefined): PaymentRequirements | undefined {
  if (!paymentHeader) return undefined;
  try {
    return decodePaymentSignatureHeader(paymentHeader).accepted;
  } catch {
    return undefined;
  }
}

// Any server, logger and type provider: the gate only adds hooks and a request decoration.
type AnyFastifyInstance = FastifyInstance<any, any, any, any, any>;

const requestStore = new AsyncLocalStorage<FastifyRequest>();

/**
 * The Fastify request whose payment is being processed, for x402 hooks and callbacks (such as human-proof
 * events) that are not handed the request itself.
 */
export function currentPaymentRequest(): FastifyRequest | undefined {
  return requestStore.getStore();
}

/** The Fastify request behind an x402 transport context passed to resource-server hooks. */
export function fastifyRequestOf(transportContext: unknown): FastifyRequest | undefined {
  const adapter = (transportContext as HTTPTransportContext | undefined)?.request?.adapter;
  return adapter instanceof FastifyHTTPAdapter ? adapter.request : undefined;
}

/**
 * Puts x402 payments in front of a Fastify app: `onRequest` answers unpaid or invalid requests with 402 (or
 * the paywall page for browsers) and lets verified ones through; `onSend` settles before a byte of the
 * response leaves, replaces the response by the settlement failure when settlement fails, and cancels the
 * verified payment instead when the handler failed (status >= 400 or threw) or the client disconnected before the
 * response, so nothing is charged for it.
 * Tiers whose payment flow settles before the handler (x402's `upfront`, `extra.paymentFlow`) are settled in
 * `onRequest`, before the handler runs: the payment stands whatever follows, a disconnect included.
 * Install on the root instance before the routes.
 */
export async function installPaymentGate(
  app: AnyFastifyInstance,
  options: PaymentGateOptions,
): Promise<void> {
  const { httpServer, paywallConfig } = options;
  if (options.paywall) httpServer.registerPaywallProvider(options.paywall);
  const initialization = createInitialization(httpServer, options.initialize ?? true);
  const unavailableReasons = new Set(options.unavailableReasons ?? ["verification_unavailable"]);
  const observer = options.observer ?? {};
  await initialization.atStart(app);

  app.decorateRequest("x402Payment", null);

  app.addHook("onRequest", async (request, reply) => {
    const adapter = new FastifyHTTPAdapter(request, options.publicUrl);
    const path = adapter.getPath();
    const context: HTTPRequestContext = {
      adapter,
      path,
      decodedPath: decodePath(path),
      // Fastify answers HEAD with the GET handler (and its upstream), so HEAD costs what GET costs.
      method: request.method === "HEAD" ? "GET" : request.method,
      paymentHeader: adapter.getHeader("payment-signature") ?? adapter.getHeader("x-payment"),
    };
    if (!httpServer.requiresPayment(context)) return;

    let result: HTTPProcessResult;
    try {
      await initialization.ready();
      result = await requestStore.run(request, () => httpServer.processHTTPRequest(context, paywallConfig));
    } catch (error) {
      if (context.paymentHeader)
        observer.outcome?.(request, "unavailable", {
          requirements: requirementsNamedBy(context.paymentHeader),
        });
      return sendFacilitatorFailure(request, reply, error);
    }
    if (result.type === "payment-error") {
      const reason = refusalOf(result.response);
      // A request without a payment is asked for one: the start of a payment, not its end.
      if (context.paymentHeader) {
        observer.outcome?.(request, reason && unavailableReasons.has(reason) ? "unavailable" : "refused", {
          requirements: requirementsNamedBy(context.paymentHeader),
          reason,
        });
      }
      if (reason && unavailableReasons.has(reason)) {
        request.log.warn(
          { url: request.url, reason },
          "x402 payment not decided: a check it needs is unavailable",
        );
        return sendInstructions(reply, { ...result.response, status: 503 }).header("retry-after", "5");
      }
      return sendInstructions(reply, namingSettlementFailure(result.response));
    }
    if (result.type === "payment-verified") request.x402Payment = { result, context, finished: false };
  });

  app.addHook("onError", async (request, _reply, error) => {
    if (request.x402Payment) request.x402Payment.handlerError = error;
  });

  app.addHook("onSend", async (request, reply, payload) => {
    const payment = request.x402Payment;
    if (!payment || payment.finished) return payload;
    payment.finished = true;
    // A client gone before the response leaves would pay for what it never gets: cancel instead of settling,
    // unless it already paid before the handler ran (the handler's work is done and paid for).
    const gone = request.raw.destroyed || reply.raw.destroyed || request.raw.socket?.destroyed === true;
    const settledBefore = payment.result.beforeHandlerSettlement !== undefined;
    if (gone)
      request.log.info(
        { url: request.url },
        settledBefore
          ? "x402 client disconnected before the paid response; settled before the handler"
          : "x402 client disconnected before the paid response; not settled",
      );
    const requirements = payment.result.paymentRequirements;
    if (reply.statusCode >= 400 || (gone && !settledBefore)) {
      observer.outcome?.(request, gone && reply.statusCode < 400 ? "not_charged_disconnect" : "refunded", {
        requirements,
      });
      return requestStore.run(request, () => cancel(httpServer, payment, reply, payload));
    }
    const started = performance.now();
    const response = await requestStore.run(request, () => settle(httpServer, payment, reply, payload));
    const settled = payment.settlement !== undefined;
    observer.settlement?.((performance.now() - started) / 1000, settled);
    observer.outcome?.(request, settled ? "settled" : "settlement_failed", { requirements });
    return response;
  });
}

async function cancel(
  httpServer: x402HTTPResourceServer,
  payment: VerifiedPayment,
  reply: FastifyReply,
  payload: unknown,
) {
  const { cancellationDispatcher, beforeHandlerSettlement, paymentPayload } = payment.result;
  const threw = payment.handlerError !== undefined;
  const cancelSettlement = await cancellationDispatcher.cancel(
    threw
      ? { reason: "handler_threw", error: payment.handlerError, responseStatus: reply.statusCode }
      : // x402 has no reason for a vanished client; its response status says what the handler did.
        { reason: "handler_failed", responseStatus: reply.statusCode },
  );
  reply.removeHeader(SETTLEMENT_OVERRIDES_HEADER);
  const failureHeaders = httpServer.createFailurePathSettlementHeaders(
    cancelSettlement,
    beforeHandlerSettlement,
    paymentPayload,
    headerText(reply, "cache-control"),
  );
  if (failureHeaders) reply.headers(failureHeaders);
  return payload;
}

async function settle(
  httpServer: x402HTTPResourceServer,
  payment: VerifiedPayment,
  reply: FastifyReply,
  payload: unknown,
) {
  const { paymentPayload, paymentRequirements, declaredExtensions, beforeHandlerSettlement } = payment.result;
  const responseBody = await toBuffer(payload);
  const responseHeaders: Record<string, string> = {};
  for (const [key, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined) responseHeaders[key] = String(value);
  }
  reply.removeHeader(SETTLEMENT_OVERRIDES_HEADER);
  try {
    const settled = await httpServer.processSettlement(
      paymentPayload,
      paymentRequirements,
      declaredExtensions,
      { request: payment.context, responseBody, responseHeaders },
      undefined,
      beforeHandlerSettlement,
    );
    if (!settled.success) {
      // The facilitator's message may quote the whole authorization and its signature: reason and transaction only.
      reply.log.warn(
        {
          reason: settled.errorReason,
          transaction: settled.transaction || undefined,
          network: settled.network,
        },
        "x402 settlement failed; response withheld",
      );
      return replaceWith(reply, namingSettlementFailure(settled.response));
    }
    const { headers, requirements: _requirements, ...settlement } = settled;
    payment.settlement = settlement;
    reply.headers(headers);
    reply.header("cache-control", withPrivateCacheControl(headerText(reply, "cache-control")));
    return responseBody;
  } catch (error) {
    const facilitatorError = getFacilitatorResponseError(error);
    if (facilitatorError) {
      reply.log.warn(
        { err: withoutSecrets(facilitatorError.message) },
        "facilitator failed during settlement; response withheld",
      );
      return replaceWith(reply, {
        status: 502,
        headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" },
        body: { error: "facilitator_unavailable", message: FACILITATOR_UNAVAILABLE },
      });
    }
    reply.log.error(
      {
        err: {
          name: (error as Error)?.name,
          message: withoutSecrets(String((error as Error)?.message ?? error)),
        },
      },
      "x402 settlement threw; response withheld",
    );
    return replaceWith(reply, {
      status: 402,
      headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" },
      body: settlementFailedBody(undefined),
    });
  }
}

/**
 * An error text without the long hex values it may quote (signatures, authorization nonces, calldata): what is
 * left says what failed. Addresses (40 hex digits) stay.
 */
export function withoutSecrets(text: string): string {
  return text.replace(/(0x)?[0-9a-fA-F]{64,}/g, "<redacted>");
}

/** The `error` of the JSON body of a 402 whose payment was verified but could not be settled. */
export const SETTLEMENT_FAILED = "settlement_failed";

// x402 states a settlement failure only in PAYMENT-RESPONSE (`success: false`, `errorReason`) and leaves the body
// empty unless the route sets `settlementFailedResponseBody`; no PAYMENT-REQUIRED is sent, as the payment may
// still land (`settlement_pending`) and must not be paid again. The body names the failure, like the gateway's
// other errors, with the facilitator's reason when it is a code rather than prose.
function settlementFailedBody(reason: string | undefined): { error: string; reason?: string } {
  return reason && /^[a-z0-9_]+$/.test(reason)
    ? { error: SETTLEMENT_FAILED, reason }
    : { error: SETTLEMENT_FAILED };
}

function namingSettlementFailure(response: HTTPResponseInstructions): HTTPResponseInstructions {
  const failure = settlementFailureOf(response);
  const body = response.body;
  const empty =
    body === undefined ||
    body === null ||
    (typeof body === "object" && Object.keys(body as object).length === 0);
  return failure && !response.isHtml && empty
    ? { ...response, body: settlementFailedBody(failure.errorReason) }
    : response;
}

/** The failed settlement a response reports in PAYMENT-RESPONSE, if it reports one. */
function settlementFailureOf(response: HTTPResponseInstructions): { errorReason?: string } | undefined {
  const header = headerOf(response.headers, "payment-response");
  if (!header) return undefined;
  try {
    const settlement = decodePaymentResponseHeader(header);
    return settlement.success ? undefined : settlement;
  } catch {
    return undefined;
  }
}

/** Swaps the handler's response for an x402 one from inside `onSend`. */
function replaceWith(reply: FastifyReply, response: HTTPResponseInstructions): string {
  // Headers describing the withheld body must not describe the replacement; CORS and the like stay.
  for (const name of ["content-type", "content-length", "content-encoding", "etag", "last-modified"])
    reply.removeHeader(name);
  reply.code(response.status);
  reply.headers(response.headers);
  if (response.isHtml) return String(response.body ?? "");
  if (!hasHeader(response.headers, "content-type"))
    reply.header("content-type", "application/json; charset=utf-8");
  return JSON.stringify(response.body ?? {});
}

function sendInstructions(reply: FastifyReply, response: HTTPResponseInstructions) {
  reply.code(response.status).headers(response.headers);
  if (response.isHtml) return reply.type("text/html; charset=utf-8").send(String(response.body ?? ""));
  return reply.send(response.body ?? {});
}

/** The `error` of the PAYMENT-REQUIRED header x402 answers a refused payment with. */
function refusalOf(response: HTTPResponseInstructions): string | undefined {
  const header = headerOf(response.headers, "payment-required");
  if (!header) return undefined;
  try {
    const error = decodePaymentRequiredHeader(header).error;
    return typeof error === "string" ? error : undefined;
  } catch {
    return undefined;
  }
}

const FACILITATOR_UNAVAILABLE = "The payment facilitator gave no usable answer; retry later";

function sendFacilitatorFailure(request: FastifyRequest, reply: FastifyReply, error: unknown) {
  const facilitatorError = getFacilitatorResponseError(error);
  if (facilitatorError) {
    // The facilitator's text may quote the authorization and its signature, or its own RPC URL: the log gets it
    // redacted, the client a fixed message.
    request.log.warn({ err: withoutSecrets(facilitatorError.message) }, "facilitator failed");
    return reply
      .code(502)
      .header("cache-control", "no-store")
      .send({ error: "facilitator_unavailable", message: FACILITATOR_UNAVAILABLE });
  }
  request.log.error({ err: error }, "x402 payment processing failed");
  return reply
    .code(503)
    .header("cache-control", "no-store")
    .send({ error: "payment_unavailable", message: "Payment processing is unavailable; retry later" });
}

function createInitialization(httpServer: x402HTTPResourceServer, enabled: boolean) {
  let done = !enabled;
  let pending: Promise<void> | undefined;
  const run = () => {
    pending ??= httpServer.initialize().then(
      () => {
        done = true;
      },
      (error) => {
        pending = undefined;
        throw error;
      },
    );
    return pending;
  };
  return {
    async atStart(app: AnyFastifyInstance) {
      if (done) return;
      try {
        await run();
      } catch (error) {
        if (isFatalStartupInitError(error)) throw error;
        app.log.warn(
          { err: (error as Error).message },
          "x402 facilitator not reachable at start; retrying on the first paid request",
        );
      }
    },
    async ready() {
      if (!done) await run();
    },
  };
}

async function toBuffer(payload: unknown): Promise<Buffer> {
  if (payload === null || payload === undefined) return Buffer.alloc(0);
  if (Buffer.isBuffer(payload)) return payload;
  if (typeof payload === "string") return Buffer.from(payload);
  if (payload instanceof Readable) {
    const chunks: Buffer[] = [];
    for await (const chunk of payload) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
    return Buffer.concat(chunks);
  }
  if (payload instanceof Uint8Array) return Buffer.from(payload);
  return Buffer.from(String(payload));
}

function headerText(reply: FastifyReply, name: string): string | null {
  const value = reply.getHeader(name);
  return value === undefined ? null : String(value);
}

function hasHeader(headers: Record<string, string>, name: string): boolean {
  return headerOf(headers, name) !== undefined;
}

function headerOf(headers: Record<string, string>, name: string): string | undefined {
  return Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
}

function decodePath(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}
