import { metrics } from "@opentelemetry/api";

const meter = metrics.getMeter("@humanpass/webhooks");

export const deliveryMetrics = {
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
