import { AttestationsApiError } from "./errors.ts";
import { parseEnvelope, parseNullifierAnswer } from "./records.ts";

/** Where the two endpoints a lookup uses are, when they are not `<origin>/api/v1/attestations` and `/nullifier`. */
export type AttestationsEndpoints = { attestations: string; nullifier: string };

export interface AttestationsClientOptions {
  /**
   * The attestations API's origin, e.g. `http://attestations-api:8081`; the client appends `/api/v1/…`. Or the
   * two endpoints themselves.
   */
  url: string | AttestationsEndpoints;
  /** Per attempt: the longest wait for the whole answer. Default 5000. */
  timeoutMs?: number;
  /** Extra attempts after a 502, 503 or 504, a timeout or a network failure. Default 2. */
  retries?: number;
  /** First back-off delay; doubled for each later retry, with jitter. Default 50. */
  retryDelayMs?: number;
  logger?: { warn(details: object, message: string): void };
}

export type RecipientFilter = { recipientEthereumAddress: string } | { recipientDid: string };

export interface AttestationsClient {
  /** Every listed (so not revoked) attestation of `schemaId` for the recipient, following `nextPage`. */
  listAttestations(schemaId: string, filter: RecipientFilter): Promise<unknown[]>;
  /** Whether at least one listed attestation of `schemaId` exists for the recipient (first page only). */
  hasAttestation(schemaId: string, filter: RecipientFilter): Promise<boolean>;
  /** The nullifier of `userId` (an ownership record's `fromId`), or null when the API knows none for it. */
  nullifier(userId: string): Promise<string | null>;
}

// A paired agent has one ownership record; more pages than this means something is wrong, not a longer wait.
const MAX_PAGES = 10;
// The statuses a rate limiter or a restarting API answers with (spec 2 has seen 503 and 504); others stay.
const RETRIED_STATUSES = new Set([502, 503, 504]);

type Answer = { status: number; body: unknown };
type Failure = { error: AttestationsApiError };

export function endpointsOf(url: string | AttestationsEndpoints): AttestationsEndpoints {
  if (typeof url !== "string") return url;
  const origin = url.replace(/\/+$/, "");
  return { attestations: `${origin}/api/v1/attestations`, nullifier: `${origin}/api/v1/nullifier` };
}

export function createAttestationsClient(options: AttestationsClientOptions): AttestationsClient {
  const endpoints = endpointsOf(options.url);
  const timeoutMs = options.timeoutMs ?? 5_000;
  const retries = options.retries ?? 2;
  const retryDelayMs = options.retryDelayMs ?? 50;
  const where = (url: URL) => `${url.origin}${url.pathname}`;

  async function attempt(url: URL): Promise<Answer | Failure> {
    try {
      const response = await fetch(url, {
        headers: { accept: "application/json" },
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (RETRIED_STATUSES.has(response.status)) {
        await response.body?.cancel();
        return {
          error: new AttestationsApiError(`attestations API answered ${response.status}: ${where(url)}`, {
            status: response.status,
          }),
        };
      }
      const text = await response.text();
      if (!response.ok) return { status: response.status, body: readJson(text) };
      try {
        return { status: response.status, body: text === "" ? undefined : JSON.parse(text) };
      } catch (cause) {
        // Not worth a retry: the same API will send the same body again.
        throw new AttestationsApiError(`attestations API sent a body that is not JSON: ${where(url)}`, {
          cause,
        });
      }
    } catch (cause) {
      if (cause instanceof AttestationsApiError) throw cause;
      return {
        error: new AttestationsApiError(`attestations API unreachable: ${where(url)}`, {
          answered: false,
          cause,
        }),
      };
    }
  }

  async function get(url: URL): Promise<Answer> {
    for (let n = 0; ; n++) {
      const answer = await attempt(url);
      if (!("error" in answer)) return answer;
      options.logger?.warn(
        { url: url.pathname, attempt: n + 1, err: answer.error.message },
        "attestations API did not answer",
      );
      if (n >= retries) {
        const { error } = answer;
        throw new AttestationsApiError(`${error.message} (after ${n + 1} attempt${n === 0 ? "" : "s"})`, {
          status: error.status,
          answered: error.answered,
          cause: error.cause,
        });
      }
      const delay = retryDelayMs * 2 ** n;
      await new Promise((resolve) => setTimeout(resolve, delay + Math.random() * delay * 0.5));
    }
  }

  async function getOk(url: URL): Promise<unknown> {
    const { status, body } = await get(url);
    if (status !== 200)
      throw new AttestationsApiError(`attestations API answered ${status}: ${where(url)}`, { status });
    return body;
  }

  function listUrl(schemaId: string, filter: RecipientFilter, page?: number): URL {
    const url = new URL(endpoints.attestations);
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
        const { data, nextPage } = parseEnvelope(await getOk(listUrl(schemaId, filter, page)));
        items.push(...data);
        if (typeof nextPage !== "number") return items;
        page = nextPage;
      }
      throw new AttestationsApiError(`attestations API returned more than ${MAX_PAGES} pages`);
    },

    async hasAttestation(schemaId, filter) {
      return parseEnvelope(await getOk(listUrl(schemaId, filter))).data.length > 0;
    },

    async nullifier(userId) {
      const url = new URL(endpoints.nullifier);
      url.searchParams.set("userId", userId);
      const { status, body } = await get(url);
      if (status === 404 && isNullifierNotFound(body)) return null;
      if (status !== 200)
        throw new AttestationsApiError(`attestations API answered ${status}: ${where(url)}`, { status });
      return parseNullifierAnswer(body).nullifier;
    },
  };
}

function readJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The nullifier endpoint's own 404 ("no nullifier for this user"), not one from a wrong URL or a proxy: those
 * must stay failures, or a misconfiguration would read as "not registered".
 */
function isNullifierNotFound(body: unknown): boolean {
  const message = (body as { message?: unknown } | undefined)?.message;
  return typeof message === "string" && message.toLowerCase() === "nullifier not found";
}
