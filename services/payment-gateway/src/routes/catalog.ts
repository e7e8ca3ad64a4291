import type { HttpApp } from "@humanpass/http";
import type { RoutesConfigFile } from "../routes-file.ts";

/** What can be bought here, for people and agents discovering the gateway. */
export async function catalogRoutes(app: HttpApp, routesFile: RoutesConfigFile): Promise<void> {
  const catalog = {
    routes: routesFile.routes.map((route) => ({
      method: route.method,
      path: route.path,
      description: route.description,
      mimeType: route.mimeType,
      tiers: route.accepts.map((tier) => ({
        price: tier.price,
        network: tier.network,
        requiredAttestations: tier.extra?.requiredAttestations ?? [],
        ...(tier.extra?.maxUse ? { maxUse: tier.extra.maxUse } : {}),
        ...(tier.extra?.scope ? { scope: tier.extra.scope } : {}),
      })),
    })),
  };
  app.get(
    "/api/v1/catalog",
    { schema: { summary: "Paid routes and their price tiers", tags: ["catalog"] } },
    async () => catalog,
  );
}
