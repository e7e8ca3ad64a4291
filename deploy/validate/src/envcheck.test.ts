import { beforeAll, describe, expect, it } from "vitest";
import { composeConfig } from "./compose-cli.ts";
import { renderForLint } from "./deploy.ts";
import { checkComposeEnv, checkManifestEnv } from "./envcheck.ts";
import { parseManifests } from "./kustomize.ts";
import { repoPath } from "./paths.ts";
import type { Problem } from "./problems.ts";
import { type ServiceConfig, serviceConfigs } from "./service-config.ts";

type Obj = Record<string, any>;

let configs: ServiceConfig[];
/** docker-compose.yml as compose resolves it, variables given their defaults. */
let resolvedCompose: () => Obj;
beforeAll(async () => {
  configs = await serviceConfigs();
  const { resolved, problems } = composeConfig(repoPath("docker-compose.yml"));
  expect(problems).toEqual([]);
  resolvedCompose = () => structuredClone(resolved!);
});

describe("service environments", () => {
  it("has every service of the committed compose file and overlays start", () => {
    const problems: Problem[] = [];
    const warnings: string[] = [];
    checkComposeEnv(resolvedCompose(), configs, problems, warnings);
    for (const overlay of ["dev", "prod"]) {
      checkManifestEnv(parseManifests(renderForLint(overlay)), overlay, configs, problems, warnings);
    }
    expect(problems).toEqual([]);
    expect(warnings).toEqual([]);
  });

  it("reports a compose service that would refuse to start, and variables nobody reads", () => {
    const compose = resolvedCompose();
    delete compose.services["chain-indexer"].environment.RPC_URL;
    compose.services["agent-auth"].environment.CHAIN_ID = "mainnet";
    compose.services["payment-gateway"].environment.MOCK_FACILITATOR = "true";
    compose.services.verifier.environment.NULIFIER_SESSION_ID = "2";
    // The stack's published admin token, run as production.
    compose.services.webhooks.environment.NODE_ENV = "production";
    const problems: Problem[] = [];
    const warnings: string[] = [];
    checkComposeEnv(compose, configs, problems, warnings);
    expect(problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
      expect.stringMatching(
        /^\/services\/agent-auth\/environment\/CHAIN_ID: agent-auth would not start: "mainnet" is not valid/,
      ),
      expect.stringMatching(
        /^\/services\/chain-indexer\/environment\/RPC_URL: chain-indexer would not start: is required/,
      ),
      expect.stringMatching(
        /^\/services\/payment-gateway\/environment\/MOCK_FACILITATOR: payment-gateway would not start: must not be true when NODE_ENV=production/,
      ),
      expect.stringMatching(
        /^\/services\/webhooks\/environment\/ADMIN_TOKEN: webhooks would not start: is a development token/,
      ),
    ]);
    expect(warnings).toEqual(["docker-compose.yml: verifier does not read NULIFIER_SESSION_ID"]);
  });

  it("reads a Deployment's environment from its ConfigMaps, literals and Secrets", () => {
    const manifests = parseManifests(renderForLint("prod")) as Obj[];
    const config = manifests.find(
      (m) => m.kind === "ConfigMap" && m.metadata.name.startsWith("chain-indexer-config"),
    )!;
    config.data.CONFIRMATIONS = "twelve";
    const problems: Problem[] = [];
    checkManifestEnv(manifests, "prod", configs, problems, []);
    expect(problems).toEqual([
      {
        where: "prod: Deployment/chain-indexer",
        path: "/spec/template/spec/containers/0/env/CONFIRMATIONS",
        message: expect.stringMatching(/^chain-indexer would not start: "twelve" is not valid/),
      },
    ]);
  });
});
