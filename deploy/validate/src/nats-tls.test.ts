import { describe, expect, it } from "vitest";
import { renderForLint } from "./deploy.ts";
import { parseManifests } from "./kustomize.ts";
import { natsTlsProblems } from "./nats-tls.ts";

type Obj = Record<string, any>;

describe("natsTlsProblems", () => {
  const find = (ms: Obj[], kind: string, name: string) =>
    ms.find((m) => m.kind === kind && m.metadata.name.startsWith(name))!;

  it("finds the CA mounted into every NATS client of the prod overlay (and nothing to check in dev)", () => {
    const prod = parseManifests(renderForLint("prod")) as Obj[];
    expect(find(prod, "ConfigMap", "humanpass-common").data.NATS_TLS_CA).toBe("/etc/nats-ca/ca.crt");
    expect(natsTlsProblems(prod, "prod")).toEqual([]);
    expect(natsTlsProblems(parseManifests(renderForLint("dev")), "dev")).toEqual([]);
  });

  it("names a NATS client left without the CA", () => {
    const ms = parseManifests(renderForLint("prod")) as Obj[];
    const webhooks = find(ms, "Deployment", "webhooks").spec.template.spec.containers[0];
    webhooks.volumeMounts = webhooks.volumeMounts.filter((m: Obj) => m.name !== "nats-ca");
    const deadLetters = find(ms, "CronJob", "humanpass-dead-letters").spec.jobTemplate.spec.template.spec;
    deadLetters.volumes.find((v: Obj) => v.name === "nats-ca").secret.items = [
      { key: "tls.crt", path: "tls.crt" },
    ];
    expect(natsTlsProblems(ms, "prod")).toEqual([
      {
        where: "prod: Deployment/webhooks",
        path: "/spec/template/spec/containers/0/volumeMounts",
        message:
          "NATS_TLS_CA is /etc/nats-ca/ca.crt, which no mounted Secret provides: the container could not connect to NATS",
      },
      {
        where: "prod: CronJob/humanpass-dead-letters",
        path: "/spec/jobTemplate/spec/template/spec/containers/0/volumeMounts",
        message: expect.stringContaining("NATS_TLS_CA is /etc/nats-ca/ca.crt"),
      },
    ]);
  });
});
