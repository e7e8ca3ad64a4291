import cors from "@fastify/cors";
import rateLimit from "@fastify/rate-limit";
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { isDatabaseUnavailable } from "@humanpass/db";
import {
  DURATION_BUCKETS_SECONDS,
  PROBE_PATHS,
  PROMETHEUS_CONTENT_TYPE,
  type ServiceMetrics,
} from "@humanpass/telemetry";
import { trace } from "@opentelemetry/api";
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from "fastify";
import type { Logger } from "pino";
import { dropForwardedForWithoutAddress, requestLogFields } from "./client-address.ts";
import { corsPluginOptions } from "./cors.ts";
import { HttpError } from "./errors.ts";
import { type RateLimitOptions, rateLimitPluginOptions } from "./rate-limit.ts";

/** How long the server waits; every wait is bounded. */
export interface HttpTimeouts {
  /** A request's headers and body must have arrived by then; Node answers 408 and closes. */
  requestMs: number;
  /** A connection idle this long is closed. */
  connectionMs: number;
  /** A response not ready by then is answered 503 `timeout`. */
  handlerMs: number;
}

export const DEFAULT_HTTP_TIMEOUTS: HttpTimeouts = {
  requestMs: 30_000,
  connectionMs: 65_000,
  handlerMs: 60_000,
};

/** What a service's configuration says about its HTTP server (TRUST_PROXY, HTTP_*_TIMEOUT_MS). */
export interface HttpServerSettings {
  /**
   * Addresses and CIDRs of the proxies in front (none when empty). request.ip is the first address, read from the
   * socket peer leftwards through X-Forwarded-For, that is not one of them: a peer not listed is the client whatever
   * header it sends, and entries a client wrote itself are never reached. An entry that is not an IP address is
   * never the client's address: the socket peer stands in.
   */
  trustProxy?: string[];
  timeouts?: Partial<HttpTimeouts>;
}

export interface HttpAppOptions extends HttpServerSettings {
  logger: Logger;
  /** Named checks for /readyz; each resolves when its dependency answers. */
  readiness?: Record<string, ReadinessCheck>;
  /** Allowed origins; `["*"]` allows any. No CORS headers when empty. */
  corsOrigins?: string[];
  /** Requests per window per client; `false` turns limiting off. */
  rateLimit?: RateLimitOptions | false;
  openapi?: {
    title: string;
    version?: string;
    description?: string;
    /** What the routes' `security` entries name, e.g. `{ adminToken: { type: "http", scheme: "bearer" } }`. */
    securitySchemes?: Record<string, { type: "http"; scheme: string; description?: string }>;
  };
  bodyLimit?: number;
  readinessTimeoutMs?: number;
  /** The service's instruments: served at /metrics, and every request's duration recorded. No /metrics without. */
  metrics?: ServiceMetrics;
}

/** A route as the `routes served` log line lists it: method, path pattern, the query parameters its schema names. */
export interface ServedRoute {
  method: string;
  url: string;
  query: string[];
}

/** Resolves when a dependency answers; an `optional` one is reported by /readyz but never makes it fail. */
export type ReadinessCheck = (() => Promise<unknown>) & { optional?: boolean };

/** A dependency the service can serve requests without (e.g. NATS, whose events wait in the outbox). */
export function optionalCheck(check: () => Promise<unknown>): ReadinessCheck {
  return Object.assign(() => check(), { optional: true });
}

export type HttpApp = FastifyInstance<any, any, any, Logger, TypeBoxTypeProvider>;

const CODES: Record<number, string> = {
  400: "invalid_request",
  401: "unauthorized",
  403: "forbidden",
  404: "not_found",
  405: "method_not_allowed",
  406: "not_acceptable",
  409: "conflict",
  413: "payload_too_large",
  408: "request_timeout",
  415: "unsupported_media_type",
  429: "rate_limited",
};

const FRAMEWORK_ERRORS: Record<string, [number, string, string]> = {
  FST_ERR_BAD_URL: [400, "invalid_request", "The path is not valid percent-encoded UTF-8"],
  FST_ERR_MAX_PARAM_LENGTH: [414, "uri_too_long", "A path segment is longer than 1000 characters"],
};

function answerFrameworkError(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const [status, code, message] = FRAMEWORK_ERRORS[error.code] ?? [
    500,
    "internal_error",
    "Internal server error",
  ];
  reply.code(status).send({ error: code, message });
}

/**
 * The Fastify base every service uses: health and readiness, JSON errors with a machine-readable code and never
 * internals, rate limiting, CORS and OpenAPI. Routes are added by the service after this returns.
 */
export async function createHttpApp(options: HttpAppOptions): Promise<HttpApp> {
  const timeouts = { ...DEFAULT_HTTP_TIMEOUTS, ...options.timeouts };
  const proxies = options.trustProxy ?? [];
  const app = Fastify({
    loggerInstance: options.logger.child({}, { serializers: { req: requestLogFields } }),
    bodyLimit: options.bodyLimit ?? 1_048_576,
    trustProxy: proxies.length > 0 ? proxies : false,
    requestTimeout: timeouts.requestMs,
    connectionTimeout: timeouts.connectionMs,
    handlerTimeout: timeouts.handlerMs,
    // Node checks requestTimeout only this often (30 s by default): a slow sender would be held up to twice as long.
    http: { connectionsCheckingInterval: Math.max(100, Math.min(1_000, Math.floor(timeouts.requestMs / 4))) },
    // Path segments carry DIDs and search text; Fastify's default of 100 characters answers longer ones with 414.
    routerOptions: { maxParamLength: 1_000 },
    // Paths the router cannot even decode never reach the error handler: answered here in the same shape.
    frameworkErrors: answerFrameworkError,
    ajv: {
      customOptions: { coerceTypes: "array", removeAdditional: false, useDefaults: true, allErrors: false },
    },
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as HttpApp;

  // What this replica serves, said once it is ready: where requests meet the service (and what a probe must cover).
  const routes: ServedRoute[] = [];
  app.addHook("onRoute", (route) => {
    const query = (route.schema?.querystring as { properties?: Record<string, unknown> } | undefined)
      ?.properties;
    for (const method of [route.method].flat()) {
      routes.push({ method, url: route.url, query: Object.keys(query ?? {}) });
    }
  });
  app.addHook("onReady", async () => app.log.info({ routes }, "routes served"));

  app.setErrorHandler((error: FastifyError | HttpError, request, reply) => {
    if (error instanceof HttpError) {
      reply.headers(error.headers).code(error.statusCode).send({ error: error.code, message: error.message });
      return;
    }
    const status = (error as FastifyError).statusCode ?? 500;
    if ((error as FastifyError).code === "FST_ERR_HANDLER_TIMEOUT") {
      request.log.warn({ url: request.url, timeoutMs: timeouts.handlerMs }, "response not ready in time");
      reply.code(503).send({ error: "timeout", message: "The request took too long; retry later" });
      return;
    }
    if (isDatabaseUnavailable(error)) {
      request.log.error({ err: (error as Error).message, url: request.url }, "database unavailable");
      reply
        .code(503)
        .header("retry-after", "5")
        .send({ error: "database_unavailable", message: "The database is not answering; retry later" });
      return;
    }
    if ((error as FastifyError).validation) {
      reply.code(400).send({ error: "invalid_request", message: error.message });
      return;
    }
    if (status >= 400 && status < 500) {
      reply.code(status).send({ error: CODES[status] ?? "invalid_request", message: error.message });
      return;
    }
    const traceId = trace.getActiveSpan()?.spanContext().traceId;
    request.log.error({ err: error, trace_id: traceId }, "unhandled error");
    reply.code(500).send({ error: "internal_error", message: "Internal server error" });
  });

  // Before the rate limit and everything else that reads request.ip.
  if (proxies.length > 0) app.addHook("onRequest", dropForwardedForWithoutAddress);

  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send({
      error: "not_found",
      message: `Route ${request.method} ${request.url.split("?")[0]} not found`,
    });
  });

  if (options.openapi) {
    await app.register(swagger, {
      openapi: {
        info: {
          title: options.openapi.title,
          version: options.openapi.version ?? "1.0.0",
          description: options.openapi.description,
        },
        ...(options.openapi.securitySchemes
          ? { components: { securitySchemes: options.openapi.securitySchemes } }
          : {}),
      },
    });
    await app.register(swaggerUi, { routePrefix: "/docs" });
  }

  // CORS first, so that a 429 carries its headers too and the page that made the call can read it.
  if (options.corsOrigins && options.corsOrigins.length > 0)
    await app.register(cors, corsPluginOptions(options.corsOrigins));
  if (options.rateLimit) {
    const exempt = [...PROBE_PATHS, ...(options.rateLimit.exempt ?? [])];
    await app.register(rateLimit, rateLimitPluginOptions({ ...options.rateLimit, exempt }));
    // An app-wide hook rather than the plugin's per-route ones: those would run after the app-wide hooks that
    // answer by themselves (the x402 gate's 402), and never for unknown paths, so probing for routes is counted.
    app.addHook("onRequest", app.rateLimit());
  }

  // Node's requestTimeout stops counting once a request reaches the app, so a body sent byte by byte (or never
  // finished) would hold the request until the connection idles out: the body reader is failed after requestMs.
  app.addHook("onRequest", (request, reply, done) => {
    const raw = request.raw;
    if (raw.complete) return done();
    const timer = setTimeout(() => {
      if (raw.complete || raw.listenerCount("error") === 0) return;
      request.log.warn(
        { url: request.url, timeoutMs: timeouts.requestMs },
        "request body not received in time",
      );
      reply.header("connection", "close");
      raw.emit(
        "error",
        Object.assign(new Error("The request body did not arrive in time"), { statusCode: 408 }),
      );
    }, timeouts.requestMs);
    const clear = () => clearTimeout(timer);
    raw.once("end", clear);
    raw.once("close", clear);
    done();
  });

  if (options.metrics) recordRequests(app, options.metrics);

  // Probes come every few seconds from every prober: logged only when something is wrong.
  app.get("/healthz", { schema: { hide: true }, logLevel: "warn" }, async () => ({ status: "ok" }));

  const timeoutMs = options.readinessTimeoutMs ?? 2_000;
  app.get("/readyz", { schema: { hide: true }, logLevel: "warn" }, async (request, reply) => {
    const checks: Record<string, string> = {};
    let ready = true;
    await Promise.all(
      Object.entries(options.readiness ?? {}).map(async ([name, check]) => {
        try {
          await withTimeout(check(), timeoutMs);
          checks[name] = "ok";
        } catch (e) {
          // The reason is for operators (the log), not for whoever can reach /readyz.
          checks[name] = "unavailable";
          if (!check.optional) ready = false;
          request.log.warn(
            { dependency: name, err: (e as Error).message },
            "readiness: dependency unavailable",
          );
        }
      }),
    );
    // Returned: with an async onSend hook (the x402 gate) still running, Fastify would otherwise send again.
    return reply.code(ready ? 200 : 503).send({ status: ready ? "ready" : "unavailable", checks });
  });

  return app;
}

const KNOWN_METHODS = new Set([
  "GET",
  "HEAD",
  "POST",
  "PUT",
  "DELETE",
  "PATCH",
  "OPTIONS",
  "CONNECT",
  "TRACE",
]);

/**
 * `error.type` of a 5xx response that the spec mandates for what the CLIENT sent (the verifier's 500 for a token that
 * does not verify): the error-ratio alerts and the availability SLO leave it out (deploy/observability/alerts.yml).
 */
export const CLIENT_INPUT_ERROR_TYPE = "client_input";
const clientCaused = new WeakSet<FastifyReply>();

/** Marks this reply's 5xx as the client's doing: recorded with `error.type="client_input"`, not as a server fault. */
export function markClientCaused(reply: FastifyReply): FastifyReply {
  clientCaused.add(reply);
  return reply;
}

/**
 * The semantic conventions' `error.type` of a server response: the status code for a 5xx (the server failed),
 * `client_input` for one marked with markClientCaused, none below 500. A request whose client hung up before the
 * answer was sent is not recorded at all (the response never finishes), so it weighs on neither errors nor latency.
 */
function errorTypeOf(reply: FastifyReply): string | undefined {
  if (reply.statusCode < 500) return undefined;
  return clientCaused.has(reply) ? CLIENT_INPUT_ERROR_TYPE : String(reply.statusCode);
}

/**
 * `http.server.request.duration` by method, route TEMPLATE and status, as the HTTP semantic conventions name it.
 * Recorded here rather than by the HTTP instrumentation, which knows the raw path only (an unbounded label).
 * A request no route matched has no `http.route`; a method outside the standard set is `_OTHER`.
 */
function recordRequests(app: HttpApp, metrics: ServiceMetrics): void {
  const duration = metrics.meter.createHistogram("http.server.request.duration", {
    description: "Duration of HTTP server requests",
    unit: "s",
    advice: { explicitBucketBoundaries: DURATION_BUCKETS_SECONDS },
  });
  const unmeasured = new Set<string>(PROBE_PATHS);
  // Off (METRICS_ENABLED=false), not even the hook runs: what the overhead benchmark compares against.
  if (metrics.enabled)
    app.addHook("onResponse", (request, reply, done) => {
      const route = request.routeOptions.url;
      if (route === undefined || !unmeasured.has(route)) {
        const errorType = errorTypeOf(reply);
        duration.record(reply.elapsedTime / 1000, {
          "http.request.method": KNOWN_METHODS.has(request.method) ? request.method : "_OTHER",
          ...(route === undefined ? {} : { "http.route": route }),
          "http.response.status_code": reply.statusCode,
          ...(errorType === undefined ? {} : { "error.type": errorType }),
        });
      }
      done();
    });
  app.get("/metrics", { schema: { hide: true }, logLevel: "warn" }, async (request, reply) => {
    // Prometheus scrapes each replica directly. A request that came through a proxy (the public ingress, which
    // routes every path of a host to the service and always adds X-Forwarded-For) is answered as an unknown path.
    if (request.headers["x-forwarded-for"] !== undefined || request.headers.forwarded !== undefined) {
      return reply.code(404).send({ error: "not_found", message: "Route GET /metrics not found" });
    }
    reply.header("content-type", PROMETHEUS_CONTENT_TYPE);
    return metrics.render();
  });
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}
