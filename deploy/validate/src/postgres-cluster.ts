/**
 * What a rendered CloudNativePG Cluster must keep for an acknowledged write to survive the bad day, beyond what its
 * CRD's schema accepts:
 * - in a production overlay (labelled `humanpass.dev/environment: prod`), synchronous replication (`spec.postgresql.synchronous`) with at least one standby confirming each commit,
 *   `dataDurability: required` (with `preferred` the operator drops the standbys from the quorum when they lag, and
 *   commits are then acknowledged by the primary alone), `failoverQuorum` (only a standby known to hold every
 *   confirmed commit is promoted); in any overlay, instances enough for the standbys it waits for and one more
 *   (a single-instance development cluster has no synchronous block: its commits would wait forever);
 * - no deprecated `monitoring.enablePodMonitor` (the overlay's own PodMonitor scrapes the instances);
 * - every ObjectStore the Barman Cloud plugin is pointed at (WAL archive, recovery source) rendered with it, and a
 *   cluster recovering from a backup archiving under another server name than the one it restores from: barman
 *   refuses to archive into a non-empty one, and writing into it would mix two timelines' histories.
 */
import type { Problem } from "./problems.ts";

type Obj = Record<string, any>;

const BARMAN_CLOUD = "barman-cloud.cloudnative-pg.io";

export function postgresClusterProblems(manifests: unknown[], where: string): Problem[] {
  const problems: Problem[] = [];
  const all = manifests as Obj[];
  const objectStores = new Set(
    all.filter((m) => m?.kind === "ObjectStore").map((m) => m.metadata?.name as string),
  );
  for (const cluster of all.filter(
    (m) => m?.kind === "Cluster" && m.apiVersion === "postgresql.cnpg.io/v1",
  )) {
    const name = cluster.metadata?.name as string;
    const add = (path: string, message: string) =>
      problems.push({ where: `${where}: Cluster/${name}`, path, message });
    const spec = cluster.spec ?? {};
    const synchronous = spec.postgresql?.synchronous;
    const at = "/spec/postgresql/synchronous";
    const prod = cluster.metadata?.labels?.["humanpass.dev/environment"] === "prod";
    if (!synchronous) {
      if (prod)
        add(at, "missing: without synchronous replication a failover loses the commits no standby had yet");
    } else {
      if (!(Number(synchronous.number) >= 1))
        add(`${at}/number`, "must be at least 1: a standby confirms each commit");
      if (prod && synchronous.dataDurability !== "required")
        add(
          `${at}/dataDurability`,
          `must be "required" (is ${JSON.stringify(synchronous.dataDurability ?? "preferred")}): otherwise commits are acknowledged without a standby when none keeps up`,
        );
      if (prod && synchronous.failoverQuorum !== true)
        add(
          `${at}/failoverQuorum`,
          "must be true: otherwise a standby that never confirmed a commit may be promoted",
        );
      const instances = Number(spec.instances ?? 1);
      if (instances < Number(synchronous.number) + 2)
        add(
          "/spec/instances",
          `${instances} instance(s), fewer than the primary, ${synchronous.number} synchronous standby(s) and one more to keep writes going while a standby is down`,
        );
    }
    if (spec.monitoring?.enablePodMonitor === true)
      add(
        "/spec/monitoring/enablePodMonitor",
        "deprecated by CloudNativePG: scrape the instances with a PodMonitor of the overlay",
      );

    const archiver = (spec.plugins ?? []).find((p: Obj) => p.name === BARMAN_CLOUD && p.isWALArchiver);
    for (const [i, plugin] of (spec.plugins ?? []).entries())
      if (plugin.name === BARMAN_CLOUD) checkStore(plugin.parameters, `/spec/plugins/${i}/parameters`);
    const sourceName = spec.bootstrap?.recovery?.source;
    const sourceIndex = (spec.externalClusters ?? []).findIndex((c: Obj) => c.name === sourceName);
    if (sourceName !== undefined && sourceIndex < 0)
      add("/spec/bootstrap/recovery/source", `no externalCluster named ${sourceName}`);
    for (const [i, external] of (spec.externalClusters ?? []).entries())
      if (external.plugin?.name === BARMAN_CLOUD)
        checkStore(external.plugin.parameters, `/spec/externalClusters/${i}/plugin/parameters`);
    const source = spec.externalClusters?.[sourceIndex]?.plugin?.parameters;
    if (source && archiver) {
      const sameStore = source.barmanObjectName === archiver.parameters?.barmanObjectName;
      const from = source.serverName ?? sourceName;
      const to = archiver.parameters?.serverName ?? name;
      if (sameStore && from === to)
        add(
          "/spec/plugins",
          `archives under server name ${to}, the one it recovers from: give the recovered cluster a serverName of its own`,
        );
    }

    function checkStore(parameters: Obj | undefined, path: string) {
      const store = parameters?.barmanObjectName;
      if (!store || !objectStores.has(store))
        add(`${path}/barmanObjectName`, `ObjectStore ${store ?? "(none)"} is not rendered`);
    }
  }
  return problems;
}
