/**
 * The facilitator server's limits, as a client sending too much or too slowly meets them: a body that trickles in is
 * answered 408 and its connection closed once the request timeout has passed; an oversized body is refused with 413.
 */
import { once } from "node:events";
import { connect } from "node:net";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildFacilitatorServer, createMockFacilitatorClient } from "../src/index.ts";

let app: FastifyInstance;
let port: number;

beforeAll(async () => {
  app = await buildFacilitatorServer({
    facilitator: createMockFacilitatorClient({ kinds: [{ network: "eip155:45056", scheme: "exact" }] }),
    requestTimeoutMs: 300,
  });
  port = Number(new URL(await app.listen({ port: 0, host: "127.0.0.1" })).port);
});
afterAll(() => app?.close());

describe("buildFacilitatorServer", () => {
  it("answers a body that never finishes with 408 and closes the connection", async () => {
    const socket = connect(port, "127.0.0.1");
    await once(socket, "connect");
    socket.write(
      "POST /settle HTTP/1.1\r\nHost: facilitator\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{",
    );
    // One byte now and then, as a slow sender keeps a request alive, until the server ends it.
    const trickle = setInterval(() => socket.writable && socket.write(" "), 50);
    let answer = "";
    socket.on("data", (chunk) => {
      answer += chunk;
    });
    await once(socket, "close");
    clearInterval(trickle);
    expect(answer.split("\r\n")[0]).toBe("HTTP/1.1 408 Request Timeout");
    expect(answer.toLowerCase()).toContain("connection: close");
  });

  it("refuses a body over 64 KiB with 413", async () => {
    const response = await fetch(`http://127.0.0.1:${port}/verify`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ padding: "x".repeat(70 * 1024) }),
    });
    expect(response.status).toBe(413);
  });

  it("answers /readyz", async () => {
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
  });
});
