import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { sleep } from "@humanpass/retry";
import { REPO_ROOT } from "@humanpass/testing/service-process";

/** A wallet's JWZ from the public iden3 V3 test vectors: well-formed, but its proofs answer another request. */
const FIXTURE_TOKEN = path.join(
  REPO_ROOT,
  "services/verifier/test/fixtures/iden3-v3/stable_authV3_8_32_token.txt",
);

/** What the verifier answers a token that does not verify (docs/contracts.md, spec 1). */
export const TOKEN_NOT_VERIFIED = { status: 500, body: { error: "The token could not be verified" } };

export interface TracedCallback {
  /** The trace the callback was sent in: ours, so it can be looked up without searching. */
  traceId: string;
  status: number;
  body: unknown;
}

/** GET, waiting out a 429 or 503 (bounded: 10 tries). */
async function getWithRetry(url: string, fetchFn: typeof fetch): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    const r = await fetchFn(url);
    if ((r.status !== 429 && r.status !== 503) || attempt >= 10) return r;
    await sleep(1_000);
  }
}

/**
 * Starts a verification session as a web application would and posts the fixture token to its callback as a
 * wallet would, under a sampled trace id of our own. The token cannot verify (its proofs answer another request,
 * its states are not the devnet's), which is the point: the verification runs whatever its outcome. `fetchFn` lets a
 * caller record the responses (the compose test declares the callback's 500 as the answer it expects).
 */
export async function postTracedCallback(
  verifierUrl: string,
  fetchFn: typeof fetch = fetch,
): Promise<TracedCallback> {
  const started = await getWithRetry(`${verifierUrl}/api/verification-request`, fetchFn);
  if (started.status !== 200) throw new Error(`GET /api/verification-request: ${started.status}`);
  const request = (await started.json()) as { body: { scope: { id: number }[] } };
  const sessionId = request.body.scope[0]?.id;
  if (sessionId === undefined) throw new Error("the authorization request has no proof request");
  const traceId = randomBytes(16).toString("hex");
  const response = await fetchFn(`${verifierUrl}/api/callback?sessionId=${sessionId}`, {
    method: "POST",
    headers: {
      "content-type": "text/plain",
      traceparent: `00-${traceId}-${randomBytes(8).toString("hex")}-01`,
    },
    body: readFileSync(FIXTURE_TOKEN, "utf8").trim(),
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: kept as text for the report
  }
  return { traceId, status: response.status, body };
}

export interface TraceSpan {
  spanId: string;
  parentSpanId?: string;
  name: string;
  service: string;
  server: boolean;
  /** The `thread.name` attribute: the verification worker's, on a `verify proof` span. */
  thread?: string;
}

/**
 * The verifier's `verify proof` span of one callback's trace and the callback's HTTP server span it descends
 * from (directly or through the framework's handler spans), or why there is no such pair.
 */
export function verificationUnderCallback(
  spans: TraceSpan[],
): { verify: TraceSpan; server: TraceSpan } | { missing: string } {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const server = spans.find((s) => s.service === "verifier" && s.server);
  if (!server) return { missing: `no verifier server span among ${spans.length} spans` };
  const verify = spans.find((s) => s.service === "verifier" && s.name === "verify proof");
  if (!verify) return { missing: `no "verify proof" span among ${spans.map((s) => s.name).join(", ")}` };
  for (let p = verify.parentSpanId && byId.get(verify.parentSpanId); p; ) {
    if (p === server) return { verify, server };
    p = p.parentSpanId ? byId.get(p.parentSpanId) : undefined;
  }
  return { missing: `"verify proof" does not descend from the server span "${server.name}"` };
}
