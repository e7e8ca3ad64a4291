import { forgetRedirectInto } from "./redirect-watch.ts";

/**
 * The fetch to give `wrapFetchWithPayment`: every request is sent with `redirect: "manual"`, so a 3xx comes back
 * to the caller as it is. x402's transports follow redirects to the 402 but send the paid retry to the URL first
 * requested, so a site that redirects to a paid server would receive a payment (and a human proof) signed for that
 * server, to spend there on the agent's account. Without redirects the URL checked is the URL paid.
 * The extension refuses a 402 reached through a cross-origin redirect on Node's fetch; this one never follows any.
 */
export function withoutRedirects(fetchImpl: typeof fetch = globalThis.fetch): typeof fetch {
  return async (input, init) => {
    const response = await fetchImpl(input, { ...init, redirect: "manual" });
    const location = response.status >= 300 && response.status < 400 && response.headers.get("location");
    const base = response.url || (input instanceof Request ? input.url : String(input));
    // Not followed: a later request for the target is the caller's own choice, not this redirect's.
    if (location && URL.canParse(location, base)) forgetRedirectInto(new URL(location, base));
    return response;
  };
}
