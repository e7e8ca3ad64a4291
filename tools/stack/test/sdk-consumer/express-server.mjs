// An Express server paid through @x402/express, with @humanpass/human-proof/server on its x402ResourceServer,
// settling through the facilitator HTTP API of the stack (FACILITATOR_URL). PublicHTTPResourceServer takes every
// resource URL from PUBLIC_URL (never Host) and prices HEAD as GET.
import {
  configureHumanProofServer,
  InMemoryHumanUsageStorage,
  InMemoryNonceStore,
  PublicHTTPResourceServer,
} from "@humanpass/human-proof/server";
import { HTTPFacilitatorClient } from "@x402/core/server";
import { paymentMiddlewareFromHTTPServer, x402ResourceServer } from "@x402/express";
import express from "express";
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

const app = express();
app.use(paymentMiddlewareFromHTTPServer(httpServer));
app.get("/weather", (_req, res) => res.json({ city: "Zurich", temperatureC: 7 }));
const server = app.listen(Number(env.PORT), "127.0.0.1", () => {
  process.stdout.write(`listening ${env.PUBLIC_URL}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
