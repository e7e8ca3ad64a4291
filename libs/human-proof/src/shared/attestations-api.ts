/** Thrown when the attestations API answers with an error status, bad JSON, or cannot be reached in time. */
export class AttestationsApiError extends Error {
  /** HTTP status when the API answered with an error status. */
  readonly status: number | undefined;
  /** False when the API could not be reached or did not answer in time. */
  readonly answered: boolean;

  constructor(message: string, options: { status?: number; answered?: boolean; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = "AttestationsApiError";
    this.status = options.status;
    this.answered = options.answered ?? true;
  }
}

/** The fields of a spec-2 attestation list item that the SDK reads. */
export type AttestationListItem = {
  id: string;
  creationTime: number;
  fromDid: string;
  toDid: string;
  fromId: string;
  toId?: string;
  fromEthereumAddress: string;
  toEthereumAddress: string;
};

type Envelope = { data: unknown[]; nextPage: number | null };

// A paired agent has one ownership record; many pages mean something is wrong, not a longer wait.
const MAX_PAGES = 20;

export async function getJson(url: URL, timeoutMs: number): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(url, {
      headers: { accept: "application/json" },
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (cause) {
    throw new AttestationsApiError(`attestations API unreachable: ${url.origin}${url.pathname}`, {
      answered: false,
      cause,
    });
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new AttestationsApiError(
      `attestations API answered ${response.status}: ${url.origin}${url.pathname}`,
      {
        status: response.status,
      },
    );
  }
  try {
    return await response.json();
  } catch (cause) {
    const timedOut = cause instanceof Error && (cause.name === "TimeoutError" || cause.name === "AbortError");
    throw new AttestationsApiError(`attestations API sent an unreadable body: ${url.origin}${url.pathname}`, {
      answered: !timedOut,
      cause,
    });
  }
}

function envelope(body: unknown, url: URL): Envelope {
  const value = body as { data?: unknown; nextPage?: unknown } | null;
  if (!value || typeof value !== "object" || !Array.isArray(value.data)) {
    throw new AttestationsApiError(`attestations API sent no data array: ${url.origin}${url.pathname}`);
  }
  return { data: value.data, nextPage: typeof value.nextPage === "number" ? value.nextPage : null };
}

function listUrl(baseUrl: string, schemaId: string, recipientDid: string): URL {
  const url = new URL(baseUrl);
  url.searchParams.set("schemaId", schemaId);
  url.searchParams.set("recipientDid", recipientDid);
  return url;
}

/** Every attestation of `schemaId` whose recipient is `recipientDid`, following `nextPage` to the end. */
export async function listAttestations(
  baseUrl: string,
  schemaId: string,
  recipientDid: string,
  timeoutMs: number,
): Promise<unknown[]> {
  const items: unknown[] = [];
  let url = listUrl(baseUrl, schemaId, recipientDid);
  for (let page = 0; page < MAX_PAGES; page++) {
    const { data, nextPage } = envelope(await getJson(url, timeoutMs), url);
    items.push(...data);
    if (nextPage === null) return items;
    url = listUrl(baseUrl, schemaId, recipientDid);
    url.searchParams.set("page_number", String(nextPage));
  }
  throw new AttestationsApiError(
    `attestations API returned more than ${MAX_PAGES} pages for ${recipientDid}`,
  );
}

/** Whether at least one (non-revoked, since the list omits revoked ones) attestation exists. */
export async function hasListedAttestation(
  baseUrl: string,
  schemaId: string,
  recipientDid: string,
  timeoutMs: number,
): Promise<boolean> {
  const url = listUrl(baseUrl, schemaId, recipientDid);
  return envelope(await getJson(url, timeoutMs), url).data.length > 0;
}
