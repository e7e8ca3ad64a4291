// The NATS cluster make test-compose-cluster runs (docker-compose.cluster.yml, deploy/compose/nats-cluster.conf) is
// the one the prod overlay deploys: as many nodes, streams at as many replicas, the same payload limit and stores.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { repoPath } from "./paths.ts";

/** The settings of a nats-server configuration the cluster's behaviour rests on. */
function natsSettings(conf: string) {
  const value = (key: string) => conf.match(new RegExp(`^\\s*${key}:\\s*(\\S+)`, "m"))?.[1];
  const routes = conf.match(/routes:\s*\[([^\]]*)\]/)?.[1]?.match(/nats:\/\/\S+/g) ?? [];
  return {
    maxPayload: value("max_payload"),
    maxMemoryStore: value("max_memory_store"),
    maxFileStore: value("max_file_store"),
    routes: routes.length,
    jetstream: /^\s*jetstream\s*\{/m.test(conf),
    users: /include "users\.conf"/.test(conf),
  };
}

const read = (file: string) => readFileSync(repoPath(file), "utf8");

describe("the compose NATS cluster and the prod overlay's", () => {
  const k8sConf = parse(read("deploy/k8s/base/nats/configmap.yaml")).data["nats.conf"] as string;
  const composeConf = read("deploy/compose/nats-cluster.conf");
  const compose = parse(read("docker-compose.cluster.yml"));
  const statefulSet = parse(read("deploy/k8s/base/nats/statefulset.yaml"));
  const prod = parse(read("deploy/k8s/overlays/prod/kustomization.yaml"));

  it("have the same payload limit, JetStream stores and users", () => {
    const k8s = natsSettings(k8sConf);
    expect(natsSettings(composeConf)).toEqual(k8s);
    expect(k8s.maxPayload).toBeDefined();
    expect(k8s.maxFileStore).toBeDefined();
  });

  it("have as many nodes, each routed to every node", () => {
    const nodes = Object.keys(compose.services).filter((s) => /^nats(-\d+)?$/.test(s));
    expect(nodes).toHaveLength(statefulSet.spec.replicas);
    expect(natsSettings(composeConf).routes).toBe(nodes.length);
    expect(natsSettings(k8sConf).routes).toBe(statefulSet.spec.replicas);
  });

  it("put every stream on every node (JETSTREAM_REPLICAS), and give the services every node's URL", () => {
    const prodReplicas = (prod.configMapGenerator as { name: string; literals?: string[] }[])
      .find((g) => g.name === "verifier-config")
      ?.literals?.find((l) => l.startsWith("JETSTREAM_REPLICAS="))
      ?.split("=")[1];
    expect(prodReplicas).toBe(String(statefulSet.spec.replicas));
    expect(compose.services["nats-topology"].environment.JETSTREAM_REPLICAS).toBe(prodReplicas);
    const prodUrls = (prod.configMapGenerator as { name: string; literals?: string[] }[])
      .find((g) => g.name === "humanpass-common")
      ?.literals?.find((l) => l.startsWith("NATS_URL="))
      ?.slice("NATS_URL=".length)
      .split(",");
    expect(prodUrls).toEqual(
      Array.from({ length: statefulSet.spec.replicas }, (_, i) => `nats://nats-${i}.nats-headless:4222`),
    );
    const nodes = Object.keys(compose.services).filter((s) => /^nats(-\d+)?$/.test(s));
    for (const service of [
      "verifier",
      "chain-indexer",
      "attestations-api",
      "agent-auth",
      "payment-gateway",
      "webhooks",
    ])
      expect(compose.services[service].environment.NATS_URL.split(",")).toEqual(
        nodes.map((n) => `nats://${n}:4222`),
      );
  });
});
