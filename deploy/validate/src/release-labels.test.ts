import { readFileSync } from "node:fs";
import { createMetrics, resourceAttributes } from "@humanpass/telemetry";
import { parseExposition } from "@humanpass/testing";
import { describe, expect, it } from "vitest";
import { renderForLint } from "./deploy.ts";
import { deploymentEnv } from "./envcheck.ts";
import { parseManifests } from "./kustomize.ts";
import { repoPath } from "./paths.ts";
import { serviceConfigs } from "./service-config.ts";

const SERVICES = (await serviceConfigs()).map((c) => c.service);

/**
 * The environment the Dockerfile's final stage bakes into an image built with these build args: its ENV lines,
 * `${ARG}` replaced by the build arg or the ARG's default.
 */
function imageEnv(dockerfile: string, buildArgs: Record<string, string>): Record<string, string> {
  const stage = dockerfile.slice(dockerfile.lastIndexOf("\nFROM "));
  const args: Record<string, string> = {};
  for (const m of stage.matchAll(/^ARG (\w+)(?:=(\S*))?$/gm)) args[m[1]!] = buildArgs[m[1]!] ?? m[2] ?? "";
  const env: Record<string, string> = {};
  for (const m of stage.matchAll(/^ENV ((?:.*\\\n)*.*)$/gm))
    for (const pair of m[1]!.matchAll(/(\w+)=(\S+)/g))
      env[pair[1]!] = pair[2]!.replace(/\$\{(\w+)\}/g, (_, name: string) => args[name] ?? "");
  return env;
}

describe("every signal of the prod overlay's images carries its release", () => {
  const manifests = parseManifests(renderForLint("prod"));
  const dockerfile = readFileSync(repoPath("Dockerfile"), "utf8");

  it("scripts/images.sh builds each image with VERSION = the tag the prod overlay pins", () => {
    const script = readFileSync(repoPath("scripts/images.sh"), "utf8");
    expect(script).toContain('--build-arg VERSION="$VERSION"');
    expect(script).toContain('-t "$REGISTRY/$service:$VERSION"');
  });

  it.each(SERVICES)(
    "%s: its spans and series say service.version 1.0.0 and deployment.environment production",
    async (service) => {
      const deployment = deploymentEnv(manifests, service);
      if (!deployment) throw new Error(`no Deployment for ${service}`);
      // values.env pins <registry>/<service>:<VERSION>@sha256:…; the image's own ENV comes first, the pod's on top.
      const version = deployment.image.match(/:([^:@/]+)@sha256:/)?.[1];
      expect(version).toBe("1.0.0");
      expect(deployment.env.SERVICE_VERSION).toBeUndefined();
      const env = { ...imageEnv(dockerfile, { SERVICE: service, VERSION: version! }), ...deployment.env };
      expect(env).toMatchObject({ SERVICE_VERSION: "1.0.0", DEPLOYMENT_ENVIRONMENT: "production" });

      // What libs/service gives the tracer provider and the meter provider.
      const resource = {
        serviceName: service,
        serviceVersion: env.SERVICE_VERSION,
        deploymentEnvironment: env.DEPLOYMENT_ENVIRONMENT,
      };
      expect(resourceAttributes(resource)).toEqual({
        "service.name": service,
        "service.version": "1.0.0",
        "deployment.environment": "production",
      });
      const metrics = createMetrics(resource);
      try {
        metrics.meter.createCounter("humanpass_release_probe_total").add(1);
        const series = parseExposition(await metrics.render()).find(
          (s) => s.name === "humanpass_release_probe_total",
        );
        expect(series?.labels).toMatchObject({
          service_name: service,
          service_version: "1.0.0",
          deployment_environment: "production",
        });
      } finally {
        await metrics.shutdown();
      }
    },
  );
});
