/**
 * Postgres connections a rendered overlay can open at its peak must fit the limits it sets: each service at its
 * HPA's maximum plus the rollout's surge, every pod holding its pool (DB_POOL_MAX), its outbox relay's
 * connection and the one its start-up migration takes, within its role's `connectionLimit`; all roles' limits plus
 * what Postgres and the operator keep for themselves within `max_connections`. A Deployment an HPA scales sets no
 * `replicas` of its own: each apply would reset the count the HPA chose.
 */
import type { Problem } from "./problems.ts";

type Obj = Record<string, any>;

/** The outbox relay's connection and the start-up migration's, beside the pool. */
const CONNECTIONS_BESIDE_THE_POOL = 2;
/** superuser_reserved_connections (3) and CloudNativePG's instance manager and exporter. */
const RESERVED_CONNECTIONS = 13;
const DEFAULT_POOL_MAX = 10;

export function connectionBudgetProblems(manifests: unknown[], where: string): Problem[] {
  const problems: Problem[] = [];
  const all = manifests as Obj[];
  const configMaps = new Map(
    all.filter((m) => m?.kind === "ConfigMap").map((m) => [m.metadata.name, m.data ?? {}]),
  );
  const hpas = all.filter((m) => m?.kind === "HorizontalPodAutoscaler");
  const cluster = all.find((m) => m?.kind === "Cluster");
  if (!cluster) return problems;
  const roles = (cluster.spec?.managed?.roles ?? []) as Obj[];
  const maxConnections = Number(cluster.spec?.postgresql?.parameters?.max_connections ?? 100);

  for (const deployment of all.filter((m) => m?.kind === "Deployment")) {
    const name = deployment.metadata?.name as string;
    const role = roles.find((r) => r.passwordSecret?.name === `${name}-db-role`);
    const hpa = hpas.find(
      (h) => h.spec?.scaleTargetRef?.kind === "Deployment" && h.spec.scaleTargetRef.name === name,
    );
    const label = `${where}: Deployment/${name}`;
    if (hpa && deployment.spec?.replicas !== undefined)
      problems.push({
        where: label,
        path: "/spec/replicas",
        message: `set while HorizontalPodAutoscaler/${hpa.metadata.name} owns the count`,
      });
    if (!role) continue;
    const maxReplicas = Number(hpa?.spec?.maxReplicas ?? deployment.spec?.replicas ?? 1);
    const surge =
      deployment.spec?.strategy?.type === "Recreate"
        ? 0
        : surgeOf(deployment.spec?.strategy?.rollingUpdate?.maxSurge, maxReplicas);
    const pool = poolMaxOf(deployment, configMaps);
    const peak = (maxReplicas + surge) * (pool + CONNECTIONS_BESIDE_THE_POOL);
    if (role.connectionLimit === undefined || role.connectionLimit < 0 || peak > role.connectionLimit)
      problems.push({
        where: label,
        path: "/spec/template/spec/containers/0",
        message:
          `${maxReplicas} replicas + ${surge} surging × (DB_POOL_MAX ${pool} + ${CONNECTIONS_BESIDE_THE_POOL}) = ` +
          `${peak} connections, over role ${role.name}'s connectionLimit (${role.connectionLimit ?? "none"})`,
      });
  }
  const limits = roles.reduce((sum, r) => sum + Math.max(0, Number(r.connectionLimit ?? maxConnections)), 0);
  if (limits + RESERVED_CONNECTIONS > maxConnections)
    problems.push({
      where: `${where}: Cluster/${cluster.metadata?.name}`,
      path: "/spec/postgresql/parameters/max_connections",
      message: `the roles' connection limits (${limits}) and ${RESERVED_CONNECTIONS} reserved exceed max_connections (${maxConnections})`,
    });
  return problems;
}

/** Kubernetes' default surge is 25 %, rounded up. */
function surgeOf(maxSurge: number | string | undefined, replicas: number): number {
  if (maxSurge === undefined) return Math.ceil(replicas * 0.25);
  if (typeof maxSurge === "number") return maxSurge;
  return maxSurge.endsWith("%")
    ? Math.ceil((replicas * Number(maxSurge.slice(0, -1))) / 100)
    : Number(maxSurge);
}

function poolMaxOf(deployment: Obj, configMaps: Map<string, Obj>): number {
  const container = deployment.spec?.template?.spec?.containers?.[0] ?? {};
  let pool: string | undefined;
  for (const source of container.envFrom ?? [])
    pool = configMaps.get(source.configMapRef?.name)?.DB_POOL_MAX ?? pool;
  for (const entry of container.env ?? [])
    if (entry.name === "DB_POOL_MAX" && entry.value !== undefined) pool = entry.value;
  return pool === undefined ? DEFAULT_POOL_MAX : Number(pool);
}
