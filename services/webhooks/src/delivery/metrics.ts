import { type Counter, type Meter, metrics } from "@opentelemetry/api";

export interface DeliveryMetrics {
  /** Attempts by `outcome`: delivered (2xx), failed (any other answer, none, a timeout), refused (the address). */
  attempts: Counter;
  retries: Counter;
  deadLetters: Counter;
}

/**
 * The delivery counters on `meter`: the service's own when it has one, the global OpenTelemetry meter otherwise
 * (a no-op until a MeterProvider is registered).
 */
export function createDeliveryMetrics(
  meter: Meter = metrics.getMeter("@humanpass/webhooks"),
): DeliveryMetrics {
  return {
    attempts: meter.createCounter("humanpass.webhooks.attempts", {
      description: "delivery attempts, by outcome (delivered, failed, refused)",
    }),
    retries: meter.createCounter("humanpass.webhooks.retries", {
      description: "failed attempts scheduled to be tried again",
    }),
    deadLetters: meter.createCounter("humanpass.webhooks.dead_letters", {
      description: "deliveries given up after the retry window, kept per endpoint for replay",
    }),
  };
}
