/** Collects items during one turn of the event loop and hands them over together. */
export interface MicroBatcher<T> {
  add(item: T): void;
  /** Hands over what is collected now, without waiting for the turn to end (a stopping consumer). */
  flush(): void;
}

/**
 * The batch is handed to `take` by setImmediate: once everything that could add without waiting for I/O has done
 * so, never later, so a lone item waits for nobody. A batch is never empty.
 */
export function microBatcher<T>(take: (items: T[]) => void): MicroBatcher<T> {
  let items: T[] = [];
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    if (items.length === 0) return;
    const taken = items;
    items = [];
    take(taken);
  };
  return {
    add(item) {
      items.push(item);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
    flush,
  };
}

/** `items` grouped by `keyOf` (in order of first appearance), each group cut into chunks of at most `max`. */
export function chunksByKey<T, K>(
  items: readonly T[],
  keyOf: (item: T) => K,
  max: number,
): Array<{ key: K; items: T[] }> {
  const size = Math.max(1, max);
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  const chunks: Array<{ key: K; items: T[] }> = [];
  for (const [key, group] of groups)
    for (let start = 0; start < group.length; start += size)
      chunks.push({ key, items: group.slice(start, start + size) });
  return chunks;
}

/** One write in flight at a time; what is added meanwhile goes into the next write, all together (group commit). */
export interface GroupWriter<T> {
  /** Resolves once the write holding `item` has finished; rejects with that write's error. */
  add(item: T): Promise<void>;
  /** Resolves once nothing is waiting or being written (shutdown). */
  idle(): Promise<void>;
}

/**
 * Unlike `microBatcher`, a batch is not what one turn of the event loop adds but what arrives while the previous
 * write runs: requests whose writes land on different turns (each its own socket read) still share a statement and
 * a commit, and a lone item is written at once.
 */
export function groupWriter<T>(write: (items: T[]) => Promise<void>): GroupWriter<T> {
  type Waiting = { item: T; written: () => void; failed: (error: unknown) => void };
  let waiting: Waiting[] = [];
  let writing: Promise<void> | undefined;

  async function writeWaiting(): Promise<void> {
    while (waiting.length > 0) {
      const batch = waiting;
      waiting = [];
      try {
        await write(batch.map((w) => w.item));
        for (const w of batch) w.written();
      } catch (error) {
        for (const w of batch) w.failed(error);
      }
    }
    writing = undefined;
  }

  return {
    add(item) {
      const added = new Promise<void>((written, failed) => waiting.push({ item, written, failed }));
      writing ??= writeWaiting();
      return added;
    },
    async idle() {
      while (writing) await writing;
    },
  };
}
