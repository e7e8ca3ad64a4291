/**
 * Runs the given tasks one after another in call order, whatever their callers do concurrently; a task that
 * fails does not stop the ones queued behind it.
 */
export function inOrder(): <T>(task: () => Promise<T>) => Promise<T> {
  let tail: Promise<unknown> = Promise.resolve();
  return (task) => {
    const run = tail.then(task, task);
    tail = run.catch(() => undefined);
    return run;
  };
}
