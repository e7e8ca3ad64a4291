import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createAttestationsClient } from "./client.ts";
import { AttestationsApiError } from "./errors.ts";

/** A real HTTP server whose answers each test scripts: one handler per request, in order; the last repeats. */
let server: http.Server;
let origin: string;
let script: Array<(req: http.IncomingMessage, res: http.ServerResponse) => void>;
let requests: string[];

const json = (status: number, body: unknown) => (_req: http.IncomingMessage, res: http.ServerResponse) => {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
};
const page = (data: unknown[], nextPage: number | null = null) =>
  json(200, { totalItems: data.length, totalPages: 1, pageNumber: 1, pageSize: 10, nextPage, data });

beforeAll(async () => {
  server = http.createServer((req, res) => {
    requests.push(req.url!);
    script[Math.min(requests.length - 1, script.length - 1)]!(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  requests = [];
  script = [];
});

function client(options: { retries?: number; timeoutMs?: number; url?: string } = {}) {
  return createAttestationsClient({
    url: options.url ?? origin,
    timeoutMs: options.timeoutMs ?? 1_000,
    retries: options.retries ?? 2,
    retryDelayMs: 5,
  });
}

const SCHEMA = `0x${"11".repeat(32)}`;
const ADDRESS = "0x1111111111111111111111111111111111111111";

describe("attestations API client", () => {
  it("appends /api/v1 to the origin, sends the filters and follows nextPage to the end", async () => {
    script = [page([{ n: 1 }], 2), page([{ n: 2 }], null)];
    const items = await client({ url: `${origin}/` }).listAttestations(SCHEMA, {
      recipientEthereumAddress: ADDRESS,
    });
    expect(items).toEqual([{ n: 1 }, { n: 2 }]);
    const [first, second] = requests.map((r) => new URL(r, "http://x"));
    expect(first!.pathname).toBe("/api/v1/attestations");
    expect(first!.searchParams.get("schemaId")).toBe(SCHEMA);
    expect(first!.searchParams.get("recipientEthereumAddress")).toBe(ADDRESS);
    expect(second!.searchParams.get("page_number")).toBe("2");
  });

  it("takes the two endpoints instead of an origin", async () => {
    script = [json(200, { userId: "5", nullifier: "7" })];
    const endpoints = { attestations: `${origin}/a/list`, nullifier: `${origin}/n/one` };
    expect(await createAttestationsClient({ url: endpoints }).nullifier("5")).toBe("7");
    expect(requests).toEqual(["/n/one?userId=5"]);
  });

  it("retries a 502, a 503 and a 504, then returns the answer", async () => {
    script = [json(503, { message: "busy" }), json(504, {}), json(502, {}), page([{ n: 1 }])];
    expect(await client({ retries: 3 }).listAttestations(SCHEMA, { recipientDid: "did:x" })).toEqual([
      { n: 1 },
    ]);
    expect(requests).toHaveLength(4);
  });

  it("gives up after the configured retries, naming the last status", async () => {
    script = [json(503, {})];
    const failure = client({ retries: 2 }).hasAttestation(SCHEMA, { recipientDid: "did:x" });
    await expect(failure).rejects.toThrow(/answered 503.*after 3 attempts/);
    await expect(failure).rejects.toMatchObject({ status: 503, answered: true });
    expect(requests).toHaveLength(3);
  });

  it("does not retry other error statuses, and fails on them", async () => {
    for (const status of [500, 429, 400]) {
      requests = [];
      script = [json(status, { message: "no" })];
      await expect(client().listAttestations(SCHEMA, { recipientDid: "did:x" })).rejects.toMatchObject({
        status,
        answered: true,
      });
      expect(requests).toHaveLength(1);
    }
  });

  it("fails on a 200 whose data is not an array, or whose body is not JSON, without retrying", async () => {
    script = [json(200, { data: { not: "an array" } })];
    await expect(client().listAttestations(SCHEMA, { recipientDid: "did:x" })).rejects.toThrow(
      /no data array/,
    );
    requests = [];
    script = [
      (_req, res) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end("<html>");
      },
    ];
    await expect(client().listAttestations(SCHEMA, { recipientDid: "did:x" })).rejects.toThrow(/not JSON/);
    expect(requests).toHaveLength(1);
  });

  it("retries a connection the server drops, then fails as unreachable", async () => {
    script = [(req) => req.socket.destroy()];
    const failure = client({ retries: 1 }).nullifier("5");
    await expect(failure).rejects.toThrow(/unreachable/);
    await expect(failure).rejects.toMatchObject({ answered: false });
    expect(requests).toHaveLength(2);
  });

  it("fails when nothing listens at the address", async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await expect(
      client({ url: `http://127.0.0.1:${port}`, retries: 1 }).nullifier("5"),
    ).rejects.toBeInstanceOf(AttestationsApiError);
  });

  it("times out an answer that does not come, retrying it", async () => {
    script = [() => {}];
    await expect(client({ timeoutMs: 100, retries: 1 }).nullifier("5")).rejects.toThrow(
      /unreachable.*after 2 attempts/,
    );
    expect(requests).toHaveLength(2);
  });

  it("reads a nullifier; the endpoint's own 404 and a null nullifier mean none", async () => {
    script = [json(200, { userId: "5", nullifier: "123456789012345678901234567890" })];
    expect(await client().nullifier("5")).toBe("123456789012345678901234567890");
    expect(new URL(requests[0]!, "http://x").searchParams.get("userId")).toBe("5");
    script = [json(404, { error: "not_found", message: "Nullifier not found" })];
    expect(await client().nullifier("5")).toBeNull();
    script = [json(200, { userId: "5", nullifier: null })];
    expect(await client().nullifier("5")).toBeNull();
  });

  it("fails on a 404 that is not the nullifier endpoint's (a wrong URL), and on a malformed nullifier", async () => {
    script = [json(404, { error: "not_found", message: "Route GET /wrong/nullifier not found" })];
    await expect(client().nullifier("5")).rejects.toMatchObject({ status: 404 });
    for (const body of [
      { userId: "5" },
      { userId: "5", nullifier: "0xab" },
      { userId: "5", nullifier: "" },
    ]) {
      script = [json(200, body)];
      await expect(client().nullifier("5")).rejects.toThrow(/no nullifier/);
    }
  });

  it("answers hasAttestation from the first page", async () => {
    script = [page([{ n: 1 }], 2)];
    expect(await client().hasAttestation(SCHEMA, { recipientDid: "did:x" })).toBe(true);
    script = [page([])];
    expect(await client().hasAttestation(SCHEMA, { recipientDid: "did:y" })).toBe(false);
    expect(requests).toHaveLength(2);
  });
});
