/**
 * Remembers the results of a pure function of a string for up to `maxEntries` arguments, forgetting the oldest
 * first; for derivations that cost more than a map lookup and see the same arguments again and again.
 */
export function boundedMemo<T>(compute: (key: string) => T, maxEntries: number): (key: string) => T {
  const results = new Map<string, T>();
  return (key) => {
    const known = results.get(key);
    if (known !== undefined) return known;
    const value = compute(key);
    // Maps iterate in insertion order: the first key is the oldest.
    if (results.size >= maxEntries) results.delete(results.keys().next().value as string);
    results.set(key, value);
    return value;
  };
}
