// Type-checked against the installed declarations only: the handler's event is typed from the catalog.
import { type HumanVerifiedData, subscribe, verifyWebhook } from "@humanpass/events";
import type { NatsConnection } from "@nats-io/nats-core";

export async function follow(nc: NatsConnection, seen: HumanVerifiedData[]): Promise<void> {
  await subscribe(nc, {
    stream: "PAYMENTS",
    type: "human_verified",
    durable: "subscriber-acme-typed",
    async handler(event) {
      const humanId: string = event.data.humanId;
      // @ts-expect-error human_verified carries no amount: the catalog's types reach the handler
      event.data.amount;
      seen.push({ ...event.data, humanId });
    },
  });
}

export function received(body: string, headers: Record<string, string>): string {
  return verifyWebhook(body, headers, { secret: ["whsec_a", "whsec_b"] }).id;
}
