import type { TestProject } from "vitest/node";
import { resolveInfrastructure } from "./infrastructure.ts";

declare module "vitest" {
  export interface ProvidedContext {
    databaseUrl: string;
    natsUrl: string;
  }
}

let stopContainers: (() => Promise<void>) | undefined;

export default async function setup(project: TestProject) {
  const infra = await resolveInfrastructure();
  stopContainers = infra.stop;
  project.provide("databaseUrl", infra.databaseUrl);
  project.provide("natsUrl", infra.natsUrl);
  // Child processes that tests start (services, CLIs) find them the usual way.
  process.env.DATABASE_URL = infra.databaseUrl;
  process.env.NATS_URL = infra.natsUrl;
  return async () => {
    await stopContainers?.();
  };
}
