import http from "node:http";
import type { AddressInfo } from "node:net";

export interface FlakyProxyOptions {
  /** Share of requests that fail: half answered 429, half with a 502 or a dropped connection. */
  failureRate: number;
  /** eth_getLogs over more blocks than this is refused the way public RPCs do. */
  maxLogRange: number;
  random?: () => number;
}

/** A JSON-RPC proxy in front of the devnet that misbehaves like a public RPC endpoint. */
export async function startFlakyRpcProxy(target: string, options: FlakyProxyOptions) {
  const random = options.random ?? Math.random;
  const stats = { requests: 0, rateLimited: 0, failed: 0, dropped: 0, refusedRanges: 0 };
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    stats.requests++;
    const roll = random();
    if (roll < options.failureRate / 2) {
      stats.rateLimited++;
      res.writeHead(429, { "content-type": "text/plain", "retry-after": "1" }).end("Too Many Requests");
      return;
    }
    if (roll < (options.failureRate * 3) / 4) {
      stats.failed++;
      res.writeHead(502, { "content-type": "text/plain" }).end("Bad Gateway");
      return;
    }
    if (roll < options.failureRate) {
      stats.dropped++;
      req.socket.destroy();
      return;
    }
    const body = JSON.parse(Buffer.concat(chunks).toString());
    const calls: any[] = Array.isArray(body) ? body : [body];
    const refused = calls.find(
      (c) => c.method === "eth_getLogs" && logRange(c.params[0]) > options.maxLogRange,
    );
    if (refused) {
      stats.refusedRanges++;
      const error = {
        jsonrpc: "2.0",
        id: refused.id,
        error: { code: -32005, message: "query returned more than 10000 results" },
      };
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify(Array.isArray(body) ? [error] : error));
      return;
    }
    const upstream = await fetch(target, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    res.writeHead(upstream.status, { "content-type": "application/json" }).end(await upstream.text());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stats,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function logRange(filter: { fromBlock?: string; toBlock?: string }): number {
  if (!filter.fromBlock?.startsWith("0x") || !filter.toBlock?.startsWith("0x"))
    return Number.POSITIVE_INFINITY;
  return Number(BigInt(filter.toBlock) - BigInt(filter.fromBlock)) + 1;
}
