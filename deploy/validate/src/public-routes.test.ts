import { describe, expect, it } from "vitest";
import { renderForLint } from "./deploy.ts";
import { parseManifests } from "./kustomize.ts";
import { INTERNAL_PATHS, pathMatches, publicRouteProblems } from "./public-routes.ts";

type Obj = Record<string, any>;

describe("publicRouteProblems", () => {
  const rendered = (overlay: string) => parseManifests(renderForLint(overlay)) as Obj[];
  const route = (ms: Obj[], name: string) =>
    ms.find((m) => m.kind === "HTTPRoute" && m.metadata.name === name)!;

  it("finds the committed routes matching API prefixes only, none of the internal paths", () => {
    for (const overlay of ["dev", "prod"]) {
      const ms = rendered(overlay);
      expect(publicRouteProblems(ms, overlay)).toEqual([]);
      const matches = ms
        .filter((m) => m.kind === "HTTPRoute")
        .flatMap((m) => m.spec.rules.flatMap((r: Obj) => r.matches.map((x: Obj) => x.path)));
      expect(matches.length).toBeGreaterThanOrEqual(4);
      for (const match of matches)
        for (const internal of INTERNAL_PATHS) expect(pathMatches(match, internal)).toBe(false);
    }
  });

  it("refuses a route that makes a probe, /metrics or /docs public, or matches beyond the API", () => {
    const ms = rendered("prod");
    // The routes as they were: the whole host.
    route(ms, "verifier").spec.rules[0].matches[0].path.value = "/";
    route(ms, "agent-auth").spec.rules[0].matches = [{ path: { type: "Exact", value: "/readyz" } }];
    delete route(ms, "payment-gateway").spec.rules[0].matches;
    route(ms, "attestations-api").spec.rules.push(
      { matches: [{ path: { type: "PathPrefix", value: "/docs" } }] },
      { matches: [{ path: { type: "PathPrefix", value: "/apidocs" } }] },
      { matches: [{ path: { type: "RegularExpression", value: "/api/.*" } }] },
    );
    expect(
      publicRouteProblems(ms, "prod")
        .map((p) => `${p.where} ${p.path}: ${p.message}`)
        .sort(),
    ).toEqual([
      "prod: HTTPRoute/agent-auth /spec/rules/0/matches/0/path: Exact /readyz makes /readyz public: match only the API's prefix",
      "prod: HTTPRoute/attestations-api /spec/rules/1/matches/0/path: PathPrefix /docs makes /docs, /docs/json public: match only the API's prefix",
      "prod: HTTPRoute/attestations-api /spec/rules/2/matches/0/path: PathPrefix /apidocs is not an API path: a public route matches an Exact or PathPrefix path under /api",
      "prod: HTTPRoute/attestations-api /spec/rules/3/matches/0/path: RegularExpression /api/.* makes /healthz, /readyz, /metrics, /docs, /docs/json public: match only the API's prefix",
      "prod: HTTPRoute/payment-gateway /spec/rules/0/matches/0/path: PathPrefix / makes /healthz, /readyz, /metrics, /docs, /docs/json public: match only the API's prefix",
      "prod: HTTPRoute/verifier /spec/rules/0/matches/0/path: PathPrefix / makes /healthz, /readyz, /metrics, /docs, /docs/json public: match only the API's prefix",
    ]);
  });
});
