/**
 * NATS subject algebra for choosing consumers. NATS 2.9 allows one filter subject per consumer, so a tail
 * over several subjects becomes one ordered consumer per (stream, filter) pair whose subjects overlap.
 */

/** The subjects both patterns match, as one pattern, or undefined when they share none. */
export function intersectSubjects(a: string, b: string): string | undefined {
  const x = a.split(".");
  const y = b.split(".");
  const out: string[] = [];
  for (let i = 0; ; i++) {
    const p = x[i];
    const q = y[i];
    if (p === undefined && q === undefined) return out.join(".");
    if (p === undefined || q === undefined) return undefined; // `>` matches one token or more, never none
    if (p === ">") return [...out, ...y.slice(i)].join(".");
    if (q === ">") return [...out, ...x.slice(i)].join(".");
    if (p === "*") out.push(q);
    else if (q === "*" || p === q) out.push(p);
    else return undefined;
  }
}

export interface StreamSubjects {
  stream: string;
  subjects: string[];
}

export interface ConsumerPlan {
  stream: string;
  /** Undefined: the whole stream. */
  filter?: string;
}

/** One consumer per stream and overlapping requested subject; a request covering a whole stream needs no filter. */
export function planConsumers(streams: StreamSubjects[], requested: string[]): ConsumerPlan[] {
  const plans: ConsumerPlan[] = [];
  for (const { stream, subjects } of streams) {
    if (requested.length === 0) {
      plans.push({ stream });
      continue;
    }
    const filters = new Set<string>();
    let whole = false;
    for (const wanted of requested) {
      for (const own of subjects) {
        const common = intersectSubjects(own, wanted);
        if (common === undefined) continue;
        if (common === own && subjects.length === 1) whole = true;
        else filters.add(common);
      }
    }
    if (whole) plans.push({ stream });
    else for (const filter of filters) plans.push({ stream, filter });
  }
  return plans;
}
