import type { FastifyRequest } from "fastify";

// The human-proof hook reports the verified human through an event, not through the payment; the payment's
// own events (settled, failed) find it again by request.
const humanIds = new WeakMap<FastifyRequest, string>();

export function rememberHumanId(request: FastifyRequest, humanId: string): void {
  humanIds.set(request, humanId);
}

export function humanIdOf(request: FastifyRequest | undefined): string | undefined {
  return request ? humanIds.get(request) : undefined;
}
