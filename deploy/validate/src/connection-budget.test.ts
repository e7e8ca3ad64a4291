import { describe, expect, it } from "vitest";
import { connectionBudgetProblems } from "./connection-budget.ts";
import { renderForLint } from "./deploy.ts";
import { parseManifests } from "./kustomize.ts";

type Obj = Record<string, any>;

const rendered = (overlay: string) => parseManifests(renderForLint(overlay)) as Obj[];
const find = (ms: Obj[], kind: string, name: string) =>
  ms.find((m) => m.kind === kind && m.metadata.name === name)!;

describe("connection budget", () => {
  it.each(["dev", "prod"])(
    "fits the %s overlay's peak within its roles' limits and max_connections",
    (overlay) => {
      expect(connectionBudgetProblems(rendered(overlay), overlay)).toEqual([]);
    },
  );

  it("refuses a pool raised past the role's limit at the HPA's maximum", () => {
    const ms = rendered("prod");
    find(ms, "Deployment", "payment-gateway").spec.template.spec.containers[0].env.push({
      name: "DB_POOL_MAX",
      value: "20",
    });
    const problems = connectionBudgetProblems(ms, "prod");
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ where: "prod: Deployment/payment-gateway" });
    expect(problems[0]!.message).toMatch(
      /^12 replicas \+ 1 surging × \(DB_POOL_MAX 20 \+ 2\) = 286 connections, over role payment_gateway's connectionLimit/,
    );
  });

  it("refuses limits that add up past max_connections, and a replica count an HPA owns", () => {
    const ms = rendered("prod");
    find(ms, "Cluster", "humanpass-db").spec.postgresql.parameters.max_connections = "200";
    find(ms, "Deployment", "verifier").spec.replicas = 3;
    expect(connectionBudgetProblems(ms, "prod").map((p) => `${p.where} ${p.path}`)).toEqual([
      "prod: Deployment/verifier /spec/replicas",
      "prod: Cluster/humanpass-db /spec/postgresql/parameters/max_connections",
    ]);
  });
});
