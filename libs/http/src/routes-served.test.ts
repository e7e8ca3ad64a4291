import { Writable } from "node:stream";
import { Type } from "@sinclair/typebox";
import pino from "pino";
import { expect, it } from "vitest";
import { createHttpApp } from "./app.ts";

it("says once ready which routes it serves, hidden ones included, with the query parameters each names", async () => {
  const lines: Array<{ msg: string; routes?: unknown }> = [];
  const logger = pino(
    { level: "info" },
    new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    }),
  );
  const app = await createHttpApp({ logger, openapi: { title: "test" } });
  app.get(
    "/things/:id",
    { schema: { querystring: Type.Object({ page: Type.Optional(Type.Integer()) }) } },
    async () => ({}),
  );
  app.post("/things", { schema: { hide: true } }, async () => ({}));
  await app.ready();
  await app.close();
  const served = lines.find((l) => l.msg === "routes served")?.routes as Array<{
    method: string;
    url: string;
  }>;
  expect(served).toEqual(
    expect.arrayContaining([
      { method: "GET", url: "/healthz", query: [] },
      { method: "GET", url: "/readyz", query: [] },
      { method: "GET", url: "/docs/json", query: [] },
      { method: "GET", url: "/things/:id", query: ["page"] },
      { method: "HEAD", url: "/things/:id", query: ["page"] },
      { method: "POST", url: "/things", query: [] },
    ]),
  );
});
