import type { Problem } from "./problems.ts";

type Obj = Record<string, any>;

/**
 * Paths every service serves for the cluster alone: the kubelet's probes, Prometheus' scrape, the OpenAPI UI and
 * document. Each answers without a rate limit, and /readyz costs a Postgres and a NATS round trip.
 */
export const INTERNAL_PATHS = ["/healthz", "/readyz", "/metrics", "/docs", "/docs/json"];
/** What the public routes may match: the services' APIs. */
const API_PREFIX = "/api";

/** Whether a Gateway API path match (type, value; PathPrefix "/" when absent) matches a request path. */
export function pathMatches(match: Obj | undefined, requestPath: string): boolean {
  const type = match?.type ?? "PathPrefix";
  const value: string = match?.value ?? "/";
  if (type === "Exact") return requestPath === value;
  if (type === "PathPrefix") {
    // A prefix matches whole path elements: /api matches /api and /api/x, not /apix.
    const prefix = value.replace(/\/+$/, "");
    return prefix === "" || requestPath === prefix || requestPath.startsWith(`${prefix}/`);
  }
  // RegularExpression's dialect is the implementation's own: it cannot be checked here, so it is not allowed.
  return true;
}

/**
 * The HTTPRoutes (each attached to the public Gateway) expose only the APIs: every match is an Exact or PathPrefix path under /api,
 * and none reaches a probe, /metrics or /docs. A rule without matches, or a match without a path, matches
 * everything.
 */
export function publicRouteProblems(manifests: unknown[], where: string): Problem[] {
  const problems: Problem[] = [];
  for (const route of (manifests as Obj[]).filter((m) => m?.kind === "HTTPRoute")) {
    const label = `${where}: HTTPRoute/${route.metadata?.name}`;
    for (const [r, rule] of (route.spec?.rules ?? []).entries()) {
      const matches: Obj[] = rule.matches?.length ? rule.matches : [{}];
      for (const [i, match] of matches.entries()) {
        const path = `/spec/rules/${r}/matches/${i}/path`;
        const reached = INTERNAL_PATHS.filter((p) => pathMatches(match.path, p));
        const type = match.path?.type ?? "PathPrefix";
        const value: string = match.path?.value ?? "/";
        if (reached.length > 0)
          problems.push({
            where: label,
            path,
            message: `${type} ${value} makes ${reached.join(", ")} public: match only the API's prefix`,
          });
        else if (
          !(type === "Exact" || type === "PathPrefix") ||
          !pathMatches({ type: "PathPrefix", value: API_PREFIX }, value)
        )
          problems.push({
            where: label,
            path,
            message: `${type} ${value} is not an API path: a public route matches an Exact or PathPrefix path under ${API_PREFIX}`,
          });
      }
    }
  }
  return problems;
}
