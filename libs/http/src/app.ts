import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { trace } from "@opentelemetry/api";
import Fastify, { type FastifyError, type FastifyInstance } from "fastify";
import type { Logger } from "pino";
import { corsHook } from "./cors";
import { HttpError } from "./errors";
import { type RateLimitOptions, rateLimitHook } from "./rate-limit";

export interface HttpAppOptions {
  logger: Logger;
  /** Named checks for /readyz; each resolves when its dependency answers. */
  readiness?: Record<string, () => Promise<unknown>>;
  /** Allowed origins; `["*"]` allows any. No CORS headers when empty. */
  corsOrigins?: string[];
  /** Requests per window per client; `false` turns limiting off. */
  rateLimit?: RateLimitOptions | false;
  openapi?: { title: string; version?: string; description?: string };
  bodyLimit?: number;
  trustProxy?: boolean;
  readinessTimeoutMs?: number;
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
  415: "unsupported_media_type",
  429: "rate_limited",
};

/**
 * The Fastify base every service uses: health and readiness, JSON errors with a machine-readable code and never
 * internals, rate limiting, CORS and OpenAPI. Routes are added by the service after this returns.
 */
export async function createHttpApp(options: HttpAppOptions): Promise<HttpApp> {
  const app = Fastify({
    loggerInstance: options.logger,
    bodyLimit: options.bodyLimit ?? 1_048_576,
    trustProxy: options.trustProxy ?? false,
    // Path segments carry DIDs and search text; Fastify's default of 100 characters answers longer ones with 414.
    routerOptions: { maxParamLength: 1_000 },
    ajv: {
      customOptions: { coerceTypes: "array", removeAdditional: false, useDefaults: true, allErrors: false },
    },
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as HttpApp;

  app.setErrorHandler((error: FastifyError | HttpError, request, reply) => {
    if (error instanceof HttpError) {
      reply.headers(error.headers).code(error.statusCode).send({ error: error.code, message: error.message });
      return;
    }
    const status = (error as FastifyError).statusCode ?? 500;
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
      },
    });
    await app.register(swaggerUi, { routePrefix: "/docs" });
  }

  // Both run on every request, so they are plain synchronous hooks. CORS comes first, so that a 429 carries its
  // headers too and the page that made the call can read it.
  if (options.corsOrigins && options.corsOrigins.length > 0)
    app.addHook("onRequest", corsHook(options.corsOrigins));
  if (options.rateLimit) {
    const exempt = ["/healthz", "/readyz", ...(options.rateLimit.exempt ?? [])];
    app.addHook("onRequest", rateLimitHook({ ...options.rateLimit, exempt }));
  }

  app.get("/healthz", { schema: { hide: true } }, async () => ({ status: "ok" }));

  const timeoutMs = options.readinessTimeoutMs ?? 2_000;
  app.get("/readyz", { schema: { hide: true } }, async (_request, reply) => {
    const checks: Record<string, string> = {};
    await Promise.all(
      Object.entries(options.readiness ?? {}).map(async ([name, check]) => {
        try {
          await withTimeout(check(), timeoutMs);
          checks[name] = "ok";
        } catch (e) {
          checks[name] = `unavailable: ${(e as Error).message}`;
        }
      }),
    );
    const ready = Object.values(checks).every((v) => v === "ok");
    reply.code(ready ? 200 : 503).send({ status: ready ? "ready" : "unavailable", checks });
  });

  return app;
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
