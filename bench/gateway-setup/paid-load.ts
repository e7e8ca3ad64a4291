// The load the benches that pay for requests share: paid requests sent `concurrency` at a time, their latencies,
// and the figures read from them.

/** What sending a set of paid requests gave. */
export interface PaidLoad {
  latencies: number[];
  seconds: number;
  failures: number;
}

/** Sends one request with each payment header to `url`, `concurrency` at a time; any status but 200 is a failure. */
export async function sendPaid(url: string, headers: string[], concurrency: number): Promise<PaidLoad> {
  const latencies: number[] = [];
  let next = 0;
  let failures = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (;;) {
        const i = next++;
        if (i >= headers.length) return;
        const t = performance.now();
        const response = await fetch(url, { headers: { "payment-signature": headers[i]! } });
        await response.arrayBuffer();
        latencies.push(performance.now() - t);
        if (response.status !== 200) failures++;
      }
    }),
  );
  return { latencies, seconds: (performance.now() - started) / 1000, failures };
}

/** Requests, throughput, p50 and p99 (ms) and failures over `loads` together. */
export function loadFigures(loads: PaidLoad[]) {
  const latencies = loads.flatMap((l) => l.latencies).sort((a, b) => a - b);
  const seconds = loads.reduce((sum, l) => sum + l.seconds, 0);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  return {
    requests: latencies.length,
    rps: latencies.length / seconds,
    p50: at(0.5),
    p99: at(0.99),
    failures: loads.reduce((sum, l) => sum + l.failures, 0),
  };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
