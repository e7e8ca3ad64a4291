import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { type AddressPolicy, RefusedAddressError } from "./address-policy.ts";

/** What is read of an answer's body; past it the connection is closed and the status alone counts. */
const MAX_ANSWER_BYTES = 64 * 1024;

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
 *
 * `deadlineMs` bounds the whole attempt: lookup, connection, the answer's headers and its body. Node's own
 * timeouts restart with every byte, so a receiver trickling its answer would hold the socket for as long as it
 * likes; at the deadline the socket is destroyed and the attempt counts as failed.
 */
export function send(
  policy: AddressPolicy,
  url: string,
  body: string,
  headers: Record<string, string>,
  deadlineMs: number,
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
  // Cleared once the outcome is known, so nothing can touch the connection after it went back to the agent.
  const deadline = new AbortController();
  const { signal } = deadline;
  const timer = setTimeout(() => deadline.abort(), deadlineMs);
  return new Promise((resolve) => {
    let settled = false;
    const settle = (result: SendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const failure = (e: Error): SendResult =>
      signal.aborted
        ? { ok: false, detail: `no complete answer within ${deadlineMs} ms` }
        : { ok: false, detail: e.message, refused: e instanceof RefusedAddressError || undefined };
    const request = client.request(
      target,
      {
        method: "POST",
        headers: { "content-type": "application/json", "user-agent": "humanpass-webhooks", ...headers },
        lookup,
        signal,
      },
      (response) => {
        const status = response.statusCode ?? 0;
        const answered = { ok: status >= 200 && status < 300, detail: `HTTP ${status}` };
        let read = 0;
        response.on("data", (chunk: Buffer) => {
          read += chunk.length;
          if (read <= MAX_ANSWER_BYTES) return;
          settle(answered);
          request.destroy();
        });
        response.on("end", () => settle(answered));
        response.on("error", (e) => settle(failure(e)));
        response.on("close", () => settle(failure(new Error("the answer was cut off"))));
      },
    );
    request.on("error", (e) => settle(failure(e)));
    request.end(body);
  });
}
