import type { Logger } from "@humanpass/telemetry";
import { Agent, type Dispatcher, request } from "undici";

/**
 * The registry could not be read: an error status, a timeout, a network failure or a body we cannot use.
 * It means "cannot tell now" (503 `verification_unavailable`), never verified and never not registered.
 */
export class VerificationUnavailableError extends Error {
  override name = "VerificationUnavailableError";
}

export interface AttestationsApiClientOptions {
  /** The API's base address, ending in `/api/v1`. */
  baseUrl: string;
  /** Per attempt: the longest wait for the answer's headers, and again for its body. */
  timeoutMs: number;
  /** Extra attempts after a 503, a 504, a timeout or a network failure. */
  retries: number;
  /** First back-off delay; doubled for each later retry, with jitter. */
  retryDelayMs?: number;
  logger?: Logger;
}

export type OwnershipFilter = { recipientEthereumAddress: string } | { recipientDid: string };

export interface AttestationsApiClient {
  /** Every listed (so not revoked) attestation of `schemaId` for the recipient, following `nextPage`. */
  listAttestations(schemaId: string, filter: OwnershipFilter): Promise<unknown[]>;
  /** The nullifier of `userId`, or null when the API knows none for it. */
  nullifier(userId: string): Promise<string | null>;
}

// A paired agent has one ownership record; more pages than this means something is wrong, not a longer wait.
const MAX_PAGES = 10;
const RETRIED_STATUSES = new Set([503, 504]);

type Answer = { status: number; body: unknown };

export function createAttestationsApiClient(options: AttestationsApiClientOptions): AttestationsApiClient {
  const base = options.baseUrl.replace(/\/+$/, "");
  const retryDelayMs = options.retryDelayMs ?? 50;
  // undici's request API over kept-alive connections: a lookup is on every uncached claim, and fetch's WHATWG
  // streams cost several times more CPU per call.
  const dispatcher = new Agent({ connections: 64 });

  async function attempt(url: URL): Promise<Answer | "retry"> {
    let response: Dispatcher.ResponseData;
    try {
      response = await request(url, {
        dispatcher,
        headers: { accept: "application/json" },
        // undici's own timers end with the request; an AbortSignal.timeout would still fire (and build an
        // error) long after every answered lookup.
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
      });
    } catch (e) {
      options.logger?.warn({ url: url.pathname, err: (e as Error).message }, "attestations API unreachable");
      return "retry";
    }
    const status = response.statusCode;
    if (RETRIED_STATUSES.has(status)) {
      await response.body.dump().catch(() => {});
      options.logger?.warn({ url: url.pathname, status }, "attestations API unavailable");
      return "retry";
    }
    try {
      const text = await response.body.text();
      return { status, body: text === "" ? undefined : JSON.parse(text) };
    } catch (e) {
      if ((e as Error).name === "BodyTimeoutError") return "retry";
      if (status < 200 || status >= 300) return { status, body: undefined };
      throw new VerificationUnavailableError(
        `attestations API sent a body that is not JSON: ${url.pathname}`,
      );
    }
  }

  async function get(url: URL): Promise<Answer> {
    for (let n = 0; ; n++) {
      const answer = await attempt(url);
      if (answer !== "retry") return answer;
      if (n >= options.retries) {
        throw new VerificationUnavailableError(
          `attestations API did not answer ${url.pathname} after ${n + 1} attempt${n === 0 ? "" : "s"}`,
        );
      }
      const delay = retryDelayMs * 2 ** n;
      await new Promise((resolve) => setTimeout(resolve, delay + Math.random() * delay * 0.5));
    }
  }

  function listUrl(schemaId: string, filter: OwnershipFilter, page?: number): URL {
    const url = new URL(`${base}/attestations`);
    url.searchParams.set("schemaId", schemaId);
    for (const [key, value] of Object.entries(filter)) url.searchParams.set(key, value);
    if (page !== undefined) url.searchParams.set("page_number", String(page));
    return url;
  }

  return {
    async listAttestations(schemaId, filter) {
      const items: unknown[] = [];
      let page: number | undefined;
      for (let n = 0; n < MAX_PAGES; n++) {
        const url = listUrl(schemaId, filter, page);
        const { status, body } = await get(url);
        if (status !== 200)
          throw new VerificationUnavailableError(`attestations API answered ${status}: ${url.pathname}`);
        const envelope = body as { data?: unknown; nextPage?: unknown } | undefined;
        if (!envelope || !Array.isArray(envelope.data)) {
          throw new VerificationUnavailableError(`attestations API sent no data array: ${url.pathname}`);
        }
        items.push(...envelope.data);
        if (typeof envelope.nextPage !== "number") return items;
        page = envelope.nextPage;
      }
      throw new VerificationUnavailableError(`attestations API returned more than ${MAX_PAGES} pages`);
    },

    async nullifier(userId) {
      const url = new URL(`${base}/nullifier`);
      url.searchParams.set("userId", userId);
      const { status, body } = await get(url);
      if (status === 404 && isApiNotFound(body)) return null;
      if (status !== 200)
        throw new VerificationUnavailableError(`attestations API answered ${status}: ${url.pathname}`);
      const nullifier = (body as { nullifier?: unknown } | undefined)?.nullifier;
      if (typeof nullifier !== "string" || !/^[0-9]+$/.test(nullifier)) {
        throw new VerificationUnavailableError(`attestations API sent no nullifier: ${url.pathname}`);
      }
      return nullifier;
    },
  };
}

/**
 * The nullifier endpoint's own 404 ("no nullifier for this user", spec 2), not one from a wrong base URL or a
 * proxy: those must stay failures, or a misconfiguration would read as "not registered".
 */
function isApiNotFound(body: unknown): boolean {
  const message = (body as { message?: unknown } | undefined)?.message;
  return typeof message === "string" && message.toLowerCase() === "nullifier not found";
}
