import { describe, expect, it } from "vitest";
import { renderForLint } from "./deploy.ts";
import { parseManifests } from "./kustomize.ts";
import { postgresClusterProblems } from "./postgres-cluster.ts";

type Obj = Record<string, any>;

const rendered = (overlay: string) => parseManifests(renderForLint(overlay)) as Obj[];
const cluster = (ms: Obj[]) => ms.find((m) => m.kind === "Cluster" && m.metadata.name === "humanpass-db")!;
const problemsOf = (ms: Obj[], overlay: string) =>
  postgresClusterProblems(ms, overlay).map((p) => `${p.where} ${p.path}: ${p.message}`);

describe("postgresClusterProblems", () => {
  it.each(["dev", "prod", "prod-restore"])("finds nothing to object to in the %s overlay", (overlay) => {
    expect(problemsOf(rendered(overlay), overlay)).toEqual([]);
  });

  it("refuses a production Cluster without its synchronous block", () => {
    const ms = rendered("prod");
    delete cluster(ms).spec.postgresql.synchronous;
    expect(problemsOf(ms, "prod")).toEqual([
      "prod: Cluster/humanpass-db /spec/postgresql/synchronous: missing: without synchronous replication a failover loses the commits no standby had yet",
    ]);
  });

  it("refuses durability relaxed, no quorum check at failover, no standby to wait for, and too few instances", () => {
    const ms = rendered("prod");
    const spec = cluster(ms).spec;
    spec.postgresql.synchronous.dataDurability = "preferred";
    delete spec.postgresql.synchronous.failoverQuorum;
    spec.postgresql.synchronous.number = 0;
    spec.instances = 1;
    expect(problemsOf(ms, "prod")).toEqual([
      "prod: Cluster/humanpass-db /spec/postgresql/synchronous/number: must be at least 1: a standby confirms each commit",
      'prod: Cluster/humanpass-db /spec/postgresql/synchronous/dataDurability: must be "required" (is "preferred"): otherwise commits are acknowledged without a standby when none keeps up',
      "prod: Cluster/humanpass-db /spec/postgresql/synchronous/failoverQuorum: must be true: otherwise a standby that never confirmed a commit may be promoted",
      "prod: Cluster/humanpass-db /spec/instances: 1 instance(s), fewer than the primary, 0 synchronous standby(s) and one more to keep writes going while a standby is down",
    ]);
  });

  it("lets a development cluster go without the block, but not wait for standbys it does not have", () => {
    const ms = rendered("dev");
    expect(cluster(ms).spec.postgresql.synchronous).toBeUndefined();
    cluster(ms).spec.postgresql.synchronous = { method: "any", number: 1 };
    expect(problemsOf(ms, "dev")).toEqual([
      "dev: Cluster/humanpass-db /spec/instances: 1 instance(s), fewer than the primary, 1 synchronous standby(s) and one more to keep writes going while a standby is down",
    ]);
  });

  it("refuses the deprecated enablePodMonitor", () => {
    const ms = rendered("prod");
    cluster(ms).spec.monitoring.enablePodMonitor = true;
    expect(problemsOf(ms, "prod")).toEqual([
      "prod: Cluster/humanpass-db /spec/monitoring/enablePodMonitor: deprecated by CloudNativePG: scrape the instances with a PodMonitor of the overlay",
    ]);
  });

  it("restores from the backups' ObjectStore and archives under a server name of its own", () => {
    const ms = rendered("prod-restore");
    const spec = cluster(ms).spec;
    expect(spec.bootstrap).toEqual({
      recovery: { source: "humanpass-db-archive", database: "humanpass", owner: "humanpass" },
    });
    expect(spec.externalClusters[0].plugin.parameters).toEqual({
      barmanObjectName: "humanpass-backups",
      serverName: "humanpass-db",
    });
    spec.plugins[0].parameters.serverName = "humanpass-db";
    spec.externalClusters[0].plugin.parameters.barmanObjectName = "humanpass-backup";
    spec.bootstrap.recovery.source = "origin";
    expect(problemsOf(ms, "prod-restore")).toEqual([
      "prod-restore: Cluster/humanpass-db /spec/bootstrap/recovery/source: no externalCluster named origin",
      "prod-restore: Cluster/humanpass-db /spec/externalClusters/0/plugin/parameters/barmanObjectName: ObjectStore humanpass-backup is not rendered",
    ]);
    spec.bootstrap.recovery.source = "humanpass-db-archive";
    spec.externalClusters[0].plugin.parameters.barmanObjectName = "humanpass-backups";
    expect(problemsOf(ms, "prod-restore")).toEqual([
      "prod-restore: Cluster/humanpass-db /spec/plugins: archives under server name humanpass-db, the one it recovers from: give the recovered cluster a serverName of its own",
    ]);
  });
});
