// One verifier instance as its own process, for the multi-instance test: the real app, database and outbox,
// with the verify step replaced by a double that says every token is the same person.
import { createDb } from "@humanpass/db";
import { buildVerifierApp } from "../../src/app.ts";
import { SCHEMA, type VerifierDatabase } from "../../src/db/schema.ts";
import type { TokenVerifier } from "../../src/verification/token-verifier.ts";
import { logger, SAME_PERSON, testSettings } from "./settings.ts";

const samePersonVerifier: TokenVerifier = {
  async verify(token, _request, sessionId) {
    if (token !== "same-person-token") throw new Error("unexpected token");
    const response = {
      id: `response-${sessionId}`,
      typ: "application/iden3-zkp-json",
      type: "https://iden3-communication.io/authorization/1.0/response",
      from: SAME_PERSON.userDid,
      to: testSettings.audienceDid,
      body: {
        scope: [{ id: Number(sessionId), circuitId: "credentialAtomicQueryV3", proof: {}, pub_signals: [] }],
      },
    };
    return { kind: "verified", response: response as never, proof: SAME_PERSON };
  },
};

const db = createDb<VerifierDatabase>({
  connectionString: process.env.DATABASE_URL as string,
  schema: SCHEMA,
  max: 20,
});
const app = await buildVerifierApp({
  logger,
  db,
  topology: { prefix: process.env.EVENTS_PREFIX ?? "" },
  settings: testSettings,
  verifier: samePersonVerifier,
  rateLimit: false,
});
await app.listen({ port: 0, host: "127.0.0.1" });
const address = app.server.address();
process.stdout.write(`listening ${typeof address === "object" && address ? address.port : 0}\n`);
process.on("SIGTERM", () => {
  void app
    .close()
    .then(() => db.destroy())
    .finally(() => process.exit(0));
});
