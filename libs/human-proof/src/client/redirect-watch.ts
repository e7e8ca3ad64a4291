import { subscribe } from "node:diagnostics_channel";

/**
 * Cross-origin redirects seen by Node's fetch (undici), through its documented diagnostics channel.
 *
 * x402's fetch follows redirects to the 402 and reports to the extension only the URL it ended at, then sends the
 * paid request to the URL it was first given. No x402 hook says where that is, so the extension learns from here
 * that the 402 it is about to sign for was reached through a redirect from another origin, and refuses.
 *
 * Responses are not tied to one fetch call, so a URL stays marked for `MARK_MS` after a redirect into it: a
 * concurrent direct request for the same URL is refused too (the safe side) rather than let a redirected one pass.
 */
const MARK_MS = 60_000;
/** Bounds the memory a process following many redirects can spend here; the oldest marks go first. */
const MAX_MARKS = 1024;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

type HeadersMessage = {
  request: { origin?: unknown; path?: unknown };
  response: { statusCode?: number; headers?: unknown[] };
};

/** URL (without fragment) → when its mark lapses, and the origin the chain into it started from. */
const marks = new Map<string, { until: number; from: string }>();
let watching = false;

function withoutFragment(url: URL): string {
  const copy = new URL(url);
  copy.hash = "";
  return copy.href;
}

function liveMark(url: string, now: number) {
  const mark = marks.get(url);
  if (mark && mark.until <= now) marks.delete(url);
  return mark && mark.until > now ? mark : undefined;
}

function locationOf(headers: unknown[] | undefined): string | undefined {
  if (!headers) return undefined;
  for (let i = 0; i + 1 < headers.length; i += 2) {
    if (String(headers[i]).toLowerCase() === "location") return String(headers[i + 1]);
  }
  return undefined;
}

function onResponseHeaders(message: unknown): void {
  const { request, response } = message as HeadersMessage;
  if (!REDIRECT_STATUSES.has(response?.statusCode ?? 0)) return;
  const location = locationOf(response.headers);
  if (!location || typeof request?.origin !== "string" || typeof request.path !== "string") return;
  let from: URL;
  let to: URL;
  try {
    from = new URL(request.path, String(request.origin));
    to = new URL(location, from);
  } catch {
    return;
  }
  const now = Date.now();
  // A chain keeps the origin it started from: a → b → b/other is still a redirect from a into b.
  const start = liveMark(withoutFragment(from), now)?.from ?? from.origin;
  if (start === to.origin) return;
  const target = withoutFragment(to);
  marks.delete(target);
  marks.set(target, { until: now + MARK_MS, from: start });
  if (marks.size > MAX_MARKS) marks.delete(marks.keys().next().value as string);
}

/** Starts watching (once per process); only redirects after this call are seen. */
export function watchRedirects(): void {
  if (watching) return;
  watching = true;
  subscribe("undici:request:headers", onResponseHeaders);
}

/** Forgets a redirect into `url` that was handed to the caller instead of followed (`redirect: "manual"`). */
export function forgetRedirectInto(url: URL): void {
  marks.delete(withoutFragment(url));
}

/** The origin a recent redirect chain into `url` started from, when that is another origin than `url`'s. */
export function crossOriginRedirectInto(url: string): string | undefined {
  let key: string;
  try {
    key = withoutFragment(new URL(url));
  } catch {
    return undefined;
  }
  return liveMark(key, Date.now())?.from;
}
