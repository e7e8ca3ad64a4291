/**
 * The fetch to give `wrapFetchWithPayment`: every request is sent with `redirect: "manual"`, so a 3xx comes back
 * to the caller as it is. x402's transports follow redirects to the 402 but send the paid retry to the URL first
 * requested, so a site that redirects to a paid server would receive a payment (and a human proof) signed for that
 * server, to spend there on the agent's account. Without redirects the URL checked is the URL paid.
 */
export function withoutRedirects(fetchImpl: typeof fetch = globalThis.fetch): typeof fetch {
  return (input, init) => fetchImpl(input, { ...init, redirect: "manual" });
}
