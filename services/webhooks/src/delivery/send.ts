import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { type AddressPolicy, RefusedAddressError } from "./address-policy.ts";

export interface SendResult {
  ok: boolean;
  /** The HTTP status, or why no status came back. */
  detail: string;
  /** Nothing was sent: the endpoint's address is not public (any more) and not allow-listed. */
  refused?: boolean;
}

/**
 * POSTs one signed delivery. The connection goes to the address the policy resolved and checked in this very
 * lookup, so a name that changes its answer after registration (or between two lookups) cannot reach a refused
 * address. Only a 2xx counts as accepted; redirects are not followed.
 */
export function send(
  policy: AddressPolicy,
  url: string,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<SendResult> {
  const target = new URL(url);
  // Node connects to an IP literal without calling `lookup`: check it here.
  const literal = target.hostname.replace(/^\[|\]$/g, "");
  if (isIP(literal)) {
    try {
      policy.check(literal);
    } catch (e) {
      return Promise.resolve({ ok: false, detail: (e as Error).message, refused: true });
    }
  }
  const lookup: LookupFunction = (host, _options, callback) => {
    policy.resolve(host).then(
      ({ address, family }) => callback(null, address, family),
      (e: Error) => callback(e as NodeJS.ErrnoException, "", 4),
    );
  };
  const client = target.protocol === "https:" ? https : http;
  return new Promise((resolve) => {
    const request = client.request(
      target,
      {
        method: "POST",
        headers: { "content-type": "application/json", "user-agent": "humanpass-webhooks", ...headers },
        lookup,
        timeout: timeoutMs,
      },
      (response) => {
        response.resume();
        const status = response.statusCode ?? 0;
        resolve({ ok: status >= 200 && status < 300, detail: `HTTP ${status}` });
      },
    );
    request.on("timeout", () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    request.on("error", (e) =>
      resolve({ ok: false, detail: e.message, refused: e instanceof RefusedAddressError || undefined }),
    );
    request.end(body);
  });
}
