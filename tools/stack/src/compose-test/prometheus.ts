import { sleep } from "@humanpass/retry";
// The compose stack's Prometheus, through its HTTP API: which alerts are firing, and the expressions of the
// dashboard and the alert rules evaluated against what it scraped.

export interface Alert {
  labels: Record<string, string>;
  state: "pending" | "firing";
  activeAt: string;
  value: string;
}

interface ApiAnswer<T> {
  status: "success" | "error";
  data: T;
  errorType?: string;
  error?: string;
}

async function api<T>(url: string): Promise<ApiAnswer<T>> {
  const r = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  return (await r.json()) as ApiAnswer<T>;
}

/** The alerts Prometheus holds now (pending or firing), each with its labels. */
export async function activeAlerts(prometheusUrl: string): Promise<Alert[]> {
  const answer = await api<{ alerts: Alert[] }>(`${prometheusUrl}/api/v1/alerts`);
  if (answer.status !== "success") throw new Error(`alerts: ${answer.error}`);
  return answer.data.alerts;
}

const matches = (alert: Alert, name: string, labels: Record<string, string>) =>
  alert.labels.alertname === name && Object.entries(labels).every(([k, v]) => alert.labels[k] === v);

/** A readable line of the alerts now active, for the log. */
export const describeAlerts = (alerts: Alert[]) =>
  alerts
    .map((a) => `${a.labels.alertname}{${a.labels.job ?? a.labels.service_name ?? ""}} ${a.state}`)
    .join(", ") || "none";

/**
 * Polls every 2 s until an alert of that name whose labels include `labels` fires (`firing`), or until none is
 * active any more (`resolved`). Throws with what was active at the end when the bound passes.
 */
export async function waitForAlert(
  prometheusUrl: string,
  name: string,
  labels: Record<string, string>,
  until: "firing" | "resolved",
  timeoutMs: number,
): Promise<number> {
  const since = Date.now();
  let last: Alert[] = [];
  while (Date.now() - since < timeoutMs) {
    last = await activeAlerts(prometheusUrl).catch(() => last);
    const own = last.filter((a) => matches(a, name, labels));
    if (until === "firing" ? own.some((a) => a.state === "firing") : own.length === 0)
      return (Date.now() - since) / 1000;
    await sleep(2_000);
  }
  throw new Error(
    `${name} ${JSON.stringify(labels)} not ${until} within ${timeoutMs / 1000} s; active: ${describeAlerts(last)}`,
  );
}

/** An instant query: its result, or the error Prometheus gave (a parse error among them). */
export async function instantQuery(
  prometheusUrl: string,
  expr: string,
): Promise<
  | { ok: true; result: { metric: Record<string, string>; value: [number, string] }[] }
  | { ok: false; error: string }
> {
  const answer = await api<{
    resultType: string;
    result: { metric: Record<string, string>; value: [number, string] }[];
  }>(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
  return answer.status === "success"
    ? { ok: true, result: answer.data.result }
    : { ok: false, error: `${answer.errorType}: ${answer.error}` };
}

/** Every metric name Prometheus has stored a sample of. */
export async function storedMetricNames(prometheusUrl: string): Promise<Set<string>> {
  const answer = await api<string[]>(`${prometheusUrl}/api/v1/label/__name__/values`);
  if (answer.status !== "success") throw new Error(`label values: ${answer.error}`);
  return new Set(answer.data);
}
