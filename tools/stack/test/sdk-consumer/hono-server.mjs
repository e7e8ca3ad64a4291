// A Hono server (on @hono/node-server) paid through @x402/hono, configured as the Express one.

import { serve } from "@hono/node-server";
import {
  configureHumanProofServer,
  InMemoryHumanUsageStorage,
  InMemoryNonceStore,
  PublicHTTPResourceServer,
} from "@humanpass/human-proof/server";
import { HTTPFacilitatorClient } from "@x402/core/server";
import { paymentMiddlewareFromHTTPServer, x402ResourceServer } from "@x402/hono";
import { Hono } from "hono";
import { devnetScheme, humanProofOptions, weatherRoute } from "./routes.mjs";

const env = process.env;
const resourceServer = new x402ResourceServer(
  new HTTPFacilitatorClient({ url: env.FACILITATOR_URL }),
).register(`eip155:${env.CHAIN_ID}`, devnetScheme(env));
configureHumanProofServer(
  resourceServer,
  humanProofOptions(env, new InMemoryHumanUsageStorage(), new InMemoryNonceStore()),
);
const httpServer = new PublicHTTPResourceServer(
  resourceServer,
  { "GET /weather": weatherRoute(env) },
  { publicUrl: env.PUBLIC_URL },
);

const app = new Hono();
app.use(paymentMiddlewareFromHTTPServer(httpServer));
app.get("/weather", (c) => c.json({ city: "Zurich", temperatureC: 7 }));
const server = serve({ fetch: app.fetch, port: Number(env.PORT), hostname: "127.0.0.1" }, () => {
  process.stdout.write(`listening ${env.PUBLIC_URL}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
