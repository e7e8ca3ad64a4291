import pino from "pino";
import { HttpRequestError, RpcRequestError, TimeoutError } from "viem";
import { describe, expect, it } from "vitest";
import { isRangeRefused } from "./logs.ts";
import { rpcErrorReason, withRetry } from "./retry.ts";

describe("rpcErrorReason", () => {
  it("tells 429s, other HTTP failures, timeouts and JSON-RPC errors apart", () => {
    expect(rpcErrorReason(new HttpRequestError({ url: "http://x", status: 429 }))).toBe("rate_limited");
    expect(rpcErrorReason(new HttpRequestError({ url: "http://x", status: 502 }))).toBe("http");
    expect(rpcErrorReason(new TimeoutError({ body: {}, url: "http://x" }))).toBe("timeout");
    expect(
      rpcErrorReason(
        new RpcRequestError({ body: {}, url: "http://x", error: { code: -32603, message: "x" } }),
      ),
    ).toBe("rpc");
    expect(rpcErrorReason(new Error("boom"))).toBe("other");
  });
});

describe("isRangeRefused", () => {
  it.each([
    "query returned more than 10000 results",
    "block range is too wide",
    "eth_getLogs is limited to a 1000 blocks range",
    "Log response size exceeded.",
  ])("recognizes %j", (message) => {
    expect(
      isRangeRefused(new RpcRequestError({ body: {}, url: "http://x", error: { code: -32005, message } })),
    ).toBe(true);
  });

  it("does not mistake other failures for a refused range", () => {
    expect(isRangeRefused(new HttpRequestError({ url: "http://x", status: 502 }))).toBe(false);
    expect(isRangeRefused(new Error("query returned more than 10000 results"))).toBe(false);
  });
});

describe("withRetry", () => {
  it("retries failures with a warning each time until the call succeeds", async () => {
    const lines: { msg: string; attempt: number; reason: string }[] = [];
    const logger = pino({ level: "warn" }, { write: (line: string) => lines.push(JSON.parse(line)) });
    let calls = 0;
    const reasons: string[] = [];
    const result = await withRetry(
      "eth_blockNumber",
      async () => {
        calls++;
        if (calls < 3) throw new HttpRequestError({ url: "http://x", status: 429 });
        return 42;
      },
      { policy: { baseMs: 1, maxMs: 2 }, logger, onError: (reason) => reasons.push(reason) },
    );
    expect(result).toBe(42);
    expect(reasons).toEqual(["rate_limited", "rate_limited"]);
    expect(lines.map((l) => [l.msg, l.attempt, l.reason])).toEqual([
      ["RPC call failed; retrying", 1, "rate_limited"],
      ["RPC call failed; retrying", 2, "rate_limited"],
    ]);
  });

  it("hands errors the caller handles straight back", async () => {
    const error = new Error("range refused");
    await expect(
      withRetry(
        "eth_getLogs",
        async () => {
          throw error;
        },
        {
          policy: { baseMs: 100, maxMs: 1_000 },
          logger: pino({ level: "silent" }),
          isFinal: (e) => e === error,
        },
      ),
    ).rejects.toBe(error);
  });
});
