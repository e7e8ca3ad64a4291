/**
 * A stack of named parts (a devnet, a database, service processes, in-process apps…), each started once the parts
 * before it are ready and given them, and stopped in the reverse order: on `close`, and at once when a part fails
 * to start, so that a failed start leaves nothing running. It imports no test runner: `npx humanpass` and `make up`
 * start their stack with it too.
 */

type Start<Before, V> = (before: Before) => Promise<V> | V;

/** A part: how it starts, given the parts before it, and how it stops (none for a value that holds nothing). */
export type Part<Before, V> = Start<Before, V> | { start: Start<Before, V>; stop?: (value: V) => unknown };

export interface StackControl {
  /** Stops every part, the last started first; rejects with the stops' failures once all were attempted. */
  close(): Promise<void>;
  /** Something started after the stack (an app a test adds): stopped first at `close`, the last added first. */
  onClose(stop: () => unknown): void;
}

export type RunningStack<Parts> = Parts & StackControl;

interface Entry {
  name: string;
  part: Part<any, any>;
}

export class StackBuilder<Before extends object, Parts extends object> {
  readonly #stages: readonly Entry[][];

  constructor(stages: readonly Entry[][] = []) {
    this.#stages = stages;
  }

  /** A part started once every part added before it is ready. */
  add<K extends string, V>(name: K, part: Part<Parts, V>): StackBuilder<Parts, Parts & Record<K, V>> {
    return new StackBuilder([...this.#stages, [{ name, part }]]);
  }

  /** A part started beside the last one added: it is given what that one is given, not that one. */
  beside<K extends string, V>(name: K, part: Part<Before, V>): StackBuilder<Before, Parts & Record<K, V>> {
    const last = this.#stages.at(-1) ?? [];
    return new StackBuilder([...this.#stages.slice(0, -1), [...last, { name, part }]]);
  }

  async start(): Promise<RunningStack<Parts>> {
    const values: Record<string, unknown> = {};
    const stops: (() => unknown)[][] = [];
    const late: (() => unknown)[] = [];
    const stopAll = async () => {
      const failures: unknown[] = [];
      for (const stop of late.splice(0).reverse()) await settle(stop, failures);
      for (const stage of stops.splice(0).reverse())
        await Promise.all(stage.map((stop) => settle(stop, failures)));
      if (failures.length === 1) throw failures[0];
      if (failures.length > 1) throw new AggregateError(failures, "parts of the stack failed to stop");
    };
    for (const stage of this.#stages) {
      const before = { ...values };
      const stageStops: (() => unknown)[] = [];
      stops.push(stageStops);
      const started = await Promise.allSettled(
        stage.map(async ({ name, part }) => {
          const { start, stop } = typeof part === "function" ? { start: part, stop: undefined } : part;
          const value = await start(before);
          values[name] = value;
          if (stop) stageStops.push(() => stop(value));
        }),
      );
      const failed = started.find((s) => s.status === "rejected");
      if (failed) {
        // The start's failure is the one to report; a stop failing after it is most likely its consequence.
        await stopAll().catch(() => {});
        throw failed.reason;
      }
    }
    let closing: Promise<void> | undefined;
    const control: StackControl = {
      close: () => {
        closing ??= stopAll();
        return closing;
      },
      onClose: (stop) => {
        late.push(stop);
      },
    };
    return Object.assign(values as Parts, control);
  }
}

async function settle(stop: () => unknown, failures: unknown[]): Promise<void> {
  try {
    await stop();
  } catch (e) {
    failures.push(e);
  }
}

/** An empty stack to `add` parts to, then `start`. */
export function buildStack(): StackBuilder<object, object> {
  return new StackBuilder();
}
