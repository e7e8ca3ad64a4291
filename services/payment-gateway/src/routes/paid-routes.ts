import { type HttpApp, HttpError } from "@humanpass/http";
import { payerOf } from "@humanpass/x402-fastify";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { PaidRouteConfig } from "../routes-file.ts";

const DEFAULT_UPSTREAM_TIMEOUT_MS = 10_000;
const FORWARDED_REQUEST_HEADERS = ["accept", "accept-language", "content-type", "user-agent"];
const RETURNED_RESPONSE_HEADERS = [
  "content-type",
  "cache-control",
  "content-language",
  "etag",
  "last-modified",
  "vary",
];

/** What the paid request bought: the tier's terms and the payer, as the handler sees them after verification. */
function purchaseOf(request: FastifyRequest) {
  const result = request.x402Payment?.result;
  if (!result) return undefined;
  const { amount, asset, network, payTo, extra } = result.paymentRequirements;
  const required = (extra as { requiredAttestations?: unknown[] } | undefined)?.requiredAttestations ?? [];
  return {
    tier: required.length > 0 ? "human" : "standard",
    amount,
    asset,
    network,
    payTo,
    payer: payerOf(result.paymentPayload),
  };
}

/** The configured paid routes; x402 has already checked payment when a handler runs. */
export async function paidRoutes(app: HttpApp, routes: PaidRouteConfig[]): Promise<void> {
  for (const route of routes) {
    app.route({
      method: route.method,
      url: route.path,
      schema: {
        summary: route.description,
        description: `Paid through x402 (${route.accepts.length} tier(s)).`,
        tags: ["paid"],
      },
      handler: route.upstream ? proxyTo(route.upstream) : demoResource(route),
    });
  }
}

function demoResource(route: PaidRouteConfig) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    reply.type(
      route.mimeType.startsWith("application/json") ? "application/json; charset=utf-8" : route.mimeType,
    );
    return {
      resource: route.description,
      path: request.url,
      purchase: purchaseOf(request),
      data: route.demo?.body ?? { message: `Thank you for paying for ${route.path}` },
      servedAt: new Date().toISOString(),
    };
  };
}

function proxyTo(upstream: NonNullable<PaidRouteConfig["upstream"]>) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const target = new URL(upstream.url);
    const query = request.url.indexOf("?");
    if (query !== -1) {
      for (const [key, value] of new URLSearchParams(request.url.slice(query + 1)))
        target.searchParams.append(key, value);
    }
    const headers: Record<string, string> = {};
    for (const name of FORWARDED_REQUEST_HEADERS) {
      const value = request.headers[name];
      if (typeof value === "string") headers[name] = value;
    }
    const payer = purchaseOf(request)?.payer;
    if (payer) headers["x402-payer"] = payer;
    headers["x-forwarded-for"] = request.ip;
    const body =
      request.body === undefined || request.method === "GET" || request.method === "HEAD"
        ? undefined
        : JSON.stringify(request.body);

    let response: Response;
    let content: Buffer;
    try {
      response = await fetch(target, {
        method: request.method,
        headers,
        body,
        redirect: "manual",
        signal: AbortSignal.timeout(upstream.timeoutMs ?? DEFAULT_UPSTREAM_TIMEOUT_MS),
      });
      content = Buffer.from(await response.arrayBuffer());
    } catch (error) {
      request.log.warn({ err: (error as Error).message, upstream: target.origin }, "upstream did not answer");
      // A failed upstream is not the payer's fault: the status >= 400 cancels the payment.
      throw new HttpError(
        502,
        "upstream_unavailable",
        "The paid resource's upstream did not answer; nothing was charged",
      );
    }
    reply.code(response.status);
    for (const name of RETURNED_RESPONSE_HEADERS) {
      const value = response.headers.get(name);
      if (value !== null) reply.header(name, value);
    }
    return reply.send(content);
  };
}
