import { type Connections, type ConnectionsOptions, prepareConnections } from "@humanpass/service";
import type { TestBus, TestDatabase } from "./index.ts";
import type { Part } from "./stack.ts";

/**
 * A stack part: a service's connections as its own start-up prepares them (migrations beside the wait for its
 * streams, then the pool, then the outbox relay), on the stack's `database` and `bus`; stopped relay first.
 */
export function serviceConnections(
  options: Omit<ConnectionsOptions, "databaseUrl" | "topology" | "connectNats">,
): Part<{ database: TestDatabase; bus: TestBus }, Connections> {
  return {
    start: ({ database, bus }) =>
      prepareConnections({
        ...options,
        databaseUrl: database.url,
        topology: bus.topology,
        connectNats: async () => bus.nats,
      }),
    async stop({ relay, db }) {
      await relay?.stop();
      await db.destroy();
    },
  };
}
