import { isIP } from "node:net";
import type { FastifyReply, FastifyRequest } from "fastify";

/**
 * request.ip is the first address, read from the socket peer leftwards through X-Forwarded-For, that is not a listed
 * proxy. A listed proxy that passes on an entry which is not an address (`unknown`, `host:port`, anything a client
 * wrote) would make that text the client's address: the header is dropped instead, so the socket peer stands in.
 */
export function dropForwardedForWithoutAddress(
  request: FastifyRequest,
  _reply: FastifyReply,
  done: () => void,
): void {
  if (isIP(request.ip) === 0) delete request.raw.headers["x-forwarded-for"];
  done();
}

/** The client address as request.ip will be once the header is checked (the first log line comes before that). */
function clientAddress(request: FastifyRequest): string | undefined {
  return isIP(request.ip) === 0 ? request.socket?.remoteAddress : request.ip;
}

/** Fastify's `req` log fields, with the socket peer beside the client address (they differ behind a proxy). */
export function requestLogFields(request: FastifyRequest): Record<string, unknown> {
  return {
    method: request.method,
    url: request.url,
    host: request.host,
    remoteAddress: clientAddress(request),
    remotePort: request.socket?.remotePort,
    peerAddress: request.socket?.remoteAddress,
  };
}
