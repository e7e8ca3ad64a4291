/** One sample of a Prometheus text exposition. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition (comments skipped). */
export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (match[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
    }
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/**
 * The sum of the samples named `name` whose labels include `labels`; undefined when there is none (a series
 * nobody recorded is not the same as one at 0).
 */
export function sampleValue(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  return sumOf(parseExposition(text), name, labels);
}

/** `sampleValue` over samples already parsed (a reader taking several series from one exposition). */
export function sumOf(
  samples: Sample[],
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const matching = samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  return matching.length === 0 ? undefined : matching.reduce((sum, s) => sum + s.value, 0);
}

/**
 * Label values that must never appear: EVM addresses, DIDs, long hex (hashes, nonces), UUIDs, and paths with a
 * concrete segment where a template belongs. Returns the offending samples' descriptions.
 */
export function unboundedLabels(text: string): string[] {
  const bad = [
    /0x[0-9a-fA-F]{8,}/,
    /did:/,
    /[0-9a-fA-F]{16,}/,
    /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i,
  ];
  const found: string[] = [];
  for (const s of parseExposition(text)) {
    for (const [k, v] of Object.entries(s.labels)) {
      if (bad.some((re) => re.test(v))) found.push(`${s.name}{${k}="${v}"}`);
      if (k === "http_route" && /\/\d+(\/|$)/.test(v)) found.push(`${s.name}{${k}="${v}"} (not a template)`);
    }
  }
  return found;
}
