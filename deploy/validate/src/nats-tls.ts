import path from "node:path";
import type { Problem } from "./problems.ts";

type Obj = Record<string, any>;

const WORKLOADS = new Set(["Deployment", "StatefulSet", "Job", "CronJob"]);
const VARIABLE = "NATS_TLS_CA";

/**
 * Where NATS speaks TLS (NATS_TLS_CA is set), every container given that variable has the CA file mounted: a client
 * without it cannot connect and a service stops at start, so a workload added without the mount is caught here.
 */
export function natsTlsProblems(manifests: unknown[], where: string): Problem[] {
  const all = manifests as Obj[];
  const configData = new Map(
    all.filter((m) => m?.kind === "ConfigMap").map((m) => [m.metadata?.name, m.data ?? {}]),
  );
  const problems: Problem[] = [];
  for (const workload of all.filter((m) => WORKLOADS.has(m?.kind))) {
    const cron = workload.kind === "CronJob";
    const podPath = cron ? "/spec/jobTemplate/spec/template/spec" : "/spec/template/spec";
    const pod = cron ? workload.spec?.jobTemplate?.spec?.template?.spec : workload.spec?.template?.spec;
    const volumes = new Map<string, Obj>((pod?.volumes ?? []).map((v: Obj) => [v.name, v]));
    for (const key of ["initContainers", "containers"])
      for (const [i, c] of (pod?.[key] ?? []).entries()) {
        let caFile: string | undefined;
        for (const source of c.envFrom ?? []) {
          // envFrom names each variable `<prefix><key>`.
          const prefix: string = source.prefix ?? "";
          const dataKey = VARIABLE.startsWith(prefix) ? VARIABLE.slice(prefix.length) : undefined;
          const value =
            dataKey === undefined ? undefined : configData.get(source.configMapRef?.name)?.[dataKey];
          if (value !== undefined) caFile = value;
        }
        for (const entry of c.env ?? []) {
          if (entry.name !== VARIABLE) continue;
          const ref = entry.valueFrom?.configMapKeyRef;
          caFile = entry.value ?? (ref ? configData.get(ref.name)?.[ref.key] : undefined);
        }
        if (!caFile) continue;
        const mount = (c.volumeMounts ?? []).find((m: Obj) => caFile.startsWith(`${m.mountPath}/`));
        const file = mount ? path.posix.relative(mount.mountPath, caFile) : undefined;
        const volume = mount ? volumes.get(mount.name) : undefined;
        const shipped =
          volume?.secret &&
          (!volume.secret.items || volume.secret.items.some((item: Obj) => item.path === file));
        if (!shipped)
          problems.push({
            where: `${where}: ${workload.kind}/${workload.metadata?.name}`,
            path: `${podPath}/${key}/${i}/volumeMounts`,
            message: `NATS_TLS_CA is ${caFile}, which no mounted Secret provides: the container could not connect to NATS`,
          });
      }
  }
  return problems;
}
