import { describe, expect, it } from "vitest";
import { buildStack, type Part } from "../src/stack.ts";

/** A part that notes its start and its stop in `log`. */
function noted<V>(log: string[], name: string, value: V): Part<object, V> {
  return {
    start: async () => {
      log.push(`start ${name}`);
      return value;
    },
    stop: async () => {
      log.push(`stop ${name}`);
    },
  };
}

describe("buildStack", () => {
  it("gives each part the parts before it and stops them in the reverse order, later additions first", async () => {
    const log: string[] = [];
    const stack = await buildStack()
      .add("database", noted(log, "database", { url: "postgres://db" }))
      .beside("devnet", noted(log, "devnet", { rpcUrl: "http://rpc" }))
      .add("service", {
        start: ({ database, devnet }) => {
          log.push(`start service on ${database.url} and ${devnet.rpcUrl}`);
          return { url: "http://service" };
        },
        stop: (service) => {
          log.push(`stop service at ${service.url}`);
        },
      })
      .add("config", ({ service }) => ({ serviceUrl: service.url }))
      .start();
    stack.onClose(() => log.push("stop app"));

    expect(stack.config).toEqual({ serviceUrl: "http://service" });
    await stack.close();
    await stack.close();
    expect(log).toEqual([
      "start database",
      "start devnet",
      "start service on postgres://db and http://rpc",
      "stop app",
      "stop service at http://service",
      "stop database",
      "stop devnet",
    ]);
  });

  it("stops what had started when a part fails to start, and fails with that part's error", async () => {
    const log: string[] = [];
    const failing = buildStack()
      .add("database", noted(log, "database", {}))
      .add("broken", async () => {
        throw new Error("no such service");
      })
      .beside("beside", noted(log, "beside", {}))
      .add("never", noted(log, "never", {}))
      .start();

    await expect(failing).rejects.toThrow("no such service");
    expect(log).toEqual(["start database", "start beside", "stop beside", "stop database"]);
  });

  it("attempts every stop and reports the ones that failed", async () => {
    const log: string[] = [];
    const stack = await buildStack()
      .add("first", noted(log, "first", {}))
      .add("second", {
        start: () => ({}),
        stop: () => {
          throw new Error("second did not stop");
        },
      })
      .start();

    await expect(stack.close()).rejects.toThrow("second did not stop");
    expect(log).toEqual(["start first", "stop first"]);
  });
});
