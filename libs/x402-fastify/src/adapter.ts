import type { HTTPAdapter } from "@x402/core/server";
import type { FastifyRequest } from "fastify";

/** x402's view of a Fastify request. */
export class FastifyHTTPAdapter implements HTTPAdapter {
  readonly request: FastifyRequest;
  private readonly publicUrl: string;

  /** `publicUrl`: the origin (and path prefix, if any) clients reach this server at. */
  constructor(request: FastifyRequest, publicUrl: string) {
    this.request = request;
    this.publicUrl = publicUrl;
  }

  getHeader(name: string): string | undefined {
    const value = this.request.headers[name.toLowerCase()];
    return Array.isArray(value) ? value[0] : value;
  }

  getMethod(): string {
    return this.request.method;
  }

  getPath(): string {
    return pathOf(this.request.url);
  }

  /**
   * The URL the client asked for, query included: a signed human proof must name exactly this resource. Its
   * origin is the configured public URL, never the request's Host, which the caller chooses.
   */
  getUrl(): string {
    return publicUrlOf(this.publicUrl, this.request.url);
  }

  getAcceptHeader(): string {
    return this.getHeader("accept") ?? "";
  }

  getUserAgent(): string {
    return this.getHeader("user-agent") ?? "";
  }

  getQueryParams(): Record<string, string | string[]> {
    return (this.request.query ?? {}) as Record<string, string | string[]>;
  }

  getQueryParam(name: string): string | string[] | undefined {
    return this.getQueryParams()[name];
  }

  /** Undefined while payment is checked: the gate runs in `onRequest`, before the body is read. */
  getBody(): unknown {
    return this.request.body;
  }
}

export function pathOf(url: string): string {
  const end = url.search(/[?#]/);
  return end === -1 ? url : url.slice(0, end);
}

/** `path` (as the request line has it) under the public URL; concatenated, so `//host/…` cannot change the origin. */
export function publicUrlOf(publicUrl: string, path: string): string {
  return `${publicUrl.replace(/\/+$/, "")}${path.startsWith("/") ? path : `/${path}`}`;
}
