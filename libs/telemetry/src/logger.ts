import { trace } from "@opentelemetry/api";
import pino, { type Logger, type LoggerOptions } from "pino";
import { safeLogLine } from "./log-hygiene.ts";

export type { Logger };

export interface LoggerConfig {
  name: string;
  level?: string;
  /** Human-readable lines (development); JSON otherwise. */
  pretty?: boolean;
  /** Where JSON lines go; stdout when absent. */
  destination?: pino.DestinationStream;
}

/**
 * A pino logger whose lines carry the active trace and span ids, so logs and traces join up, and carry no terminal
 * control characters and no URL paths or credentials (`safeLogLine`).
 */
export function createLogger(config: LoggerConfig): Logger {
  const options: LoggerOptions = {
    name: config.name,
    level: config.level ?? "info",
    mixin() {
      const span = trace.getActiveSpan();
      if (!span) return {};
      const { traceId, spanId } = span.spanContext();
      return { trace_id: traceId, span_id: spanId };
    },
    redact: {
      paths: ["req.headers.authorization", "req.headers.cookie", "*.privateKey", "*.secret"],
      remove: true,
    },
    hooks: { streamWrite: safeLogLine },
  };
  if (config.pretty) {
    return pino({
      ...options,
      transport: {
        target: "pino-pretty",
        options: {
          colorize: true,
          singleLine: true,
          translateTime: "HH:MM:ss.l",
          ignore: "pid,hostname,name",
        },
      },
    });
  }
  return config.destination ? pino(options, config.destination) : pino(options);
}
