import pino from "pino";
import { expect, it } from "vitest";
import { createHttpApp } from "./app.ts";

it("answers paths the router cannot decode, or too long to match, with a machine-readable code and a fixed message", async () => {
  const app = await createHttpApp({ logger: pino({ level: "silent" }) });
  app.get("/things/:id", async () => ({}));
  app.get("/files/*", async () => ({}));
  for (const url of ["/things/%ZZ", "/things/%C0%AF", "/files/%FF%FE"]) {
    const response = await app.inject({ url });
    expect({ url, status: response.statusCode, body: response.json() }).toEqual({
      url,
      status: 400,
      body: { error: "invalid_request", message: "The path is not valid percent-encoded UTF-8" },
    });
  }
  const long = await app.inject({ url: `/things/${"a".repeat(1_001)}` });
  expect({ status: long.statusCode, body: long.json() }).toEqual({
    status: 414,
    body: { error: "uri_too_long", message: "A path segment is longer than 1000 characters" },
  });
  await app.close();
});
