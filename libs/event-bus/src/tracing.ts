import {
  type Context,
  context,
  type Link,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";

export const tracer = trace.getTracer("@humanpass/event-bus");

/** The W3C trace headers of the active context, to be stored with an outbox row. */
export function captureTraceContext(): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier;
}

export function contextFrom(carrier: Record<string, string> | undefined): Context {
  return carrier ? propagation.extract(ROOT_CONTEXT, carrier) : ROOT_CONTEXT;
}

export function injectInto(ctx: Context): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return carrier;
}

/** A PRODUCER span under `parent`, with the context that carries it; the caller ends it. */
export function startProducerSpan(
  name: string,
  parent: Context,
  attributes: Record<string, string>,
): { span: Span; ctx: Context } {
  const span = tracer.startSpan(name, { kind: SpanKind.PRODUCER, attributes }, parent);
  return { span, ctx: trace.setSpan(parent, span) };
}

/** A link to the span a message's trace headers carry; none when they carry no valid one. */
export function linkTo(carrier: Record<string, string> | undefined): Link[] {
  const spanContext = trace.getSpanContext(contextFrom(carrier));
  return spanContext && trace.isSpanContextValid(spanContext) ? [{ context: spanContext }] : [];
}

export async function inSpan<T>(
  name: string,
  options: {
    parent: Context;
    kind: SpanKind;
    attributes?: Record<string, string | number>;
    links?: Link[];
  },
  fn: (span: Span, ctx: Context) => Promise<T>,
): Promise<T> {
  const span = tracer.startSpan(
    name,
    { kind: options.kind, attributes: options.attributes, links: options.links },
    options.parent,
  );
  const ctx = trace.setSpan(options.parent, span);
  try {
    return await context.with(ctx, () => fn(span, ctx));
  } catch (e) {
    span.recordException(e as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: (e as Error).message });
    throw e;
  } finally {
    span.end();
  }
}

export { SpanKind, SpanStatusCode };
