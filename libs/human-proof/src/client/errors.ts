import { decodePaymentRequiredHeader } from "@x402/core/http";

type HeaderSource = { get(name: string): string | null } | Record<string, unknown>;
type ResponseLike = { status?: number; statusCode?: number; headers?: HeaderSource };

function headerValue(headers: HeaderSource | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  if (typeof headers.get === "function")
    return (headers as { get(n: string): string | null }).get(name) ?? undefined;
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== name) continue;
    const first = Array.isArray(value) ? value[0] : value;
    return first == null ? undefined : String(first);
  }
  return undefined;
}

function responseRefusedForMaxUse(response: ResponseLike): boolean {
  if ((response.status ?? response.statusCode) !== 402) return false;
  const header = headerValue(response.headers, "payment-required");
  if (!header) return false;
  try {
    return decodePaymentRequiredHeader(header).error === "max_use_exceeded";
  } catch {
    return false;
  }
}

/**
 * True for a `max_use_exceeded` refusal, given any of: an error carrying an HTTP `response` (axios style),
 * a fetch `Response` (or `{ status, headers }`), or a decoded x402 `PaymentRequired` object.
 * After it, call the selector's `disqualify()` so the retry picks the standard tier.
 */
export function isMaxUseExceededError(err: unknown): boolean {
  if (typeof err !== "object" || err === null) return false;
  if ("x402Version" in err && "error" in err)
    return (err as { error?: unknown }).error === "max_use_exceeded";
  if ("response" in err && typeof err.response === "object" && err.response !== null) {
    return responseRefusedForMaxUse(err.response as ResponseLike);
  }
  if ("status" in err || "statusCode" in err) return responseRefusedForMaxUse(err as ResponseLike);
  return false;
}
