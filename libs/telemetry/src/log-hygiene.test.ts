import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { routeConsoleTo } from "./console.ts";
import { createLogger } from "./logger.ts";

function capture(level = "info") {
  const raw: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      raw.push(String(chunk));
      done();
    },
  });
  const lines = () => raw.map((line) => JSON.parse(line) as Record<string, unknown>);
  return { raw, lines, logger: createLogger({ name: "svc", level, destination }) };
}

/** Whether the text holds a character that acts on a terminal: C0 controls but line feed and tab, DEL, C1. */
function hasTerminalControl(text: string): boolean {
  return [...text].some((c) => {
    const code = c.charCodeAt(0);
    return (code < 0x20 && code !== 0x09 && code !== 0x0a) || (code >= 0x7f && code <= 0x9f);
  });
}

describe("log lines", () => {
  it("carry no terminal control characters, whatever text they were handed", () => {
    const { raw, lines, logger } = capture();
    const hostile = "\u001b[2J\u001b[31mred\u009b31m\u0007\rover\u0008\u007f";
    logger.warn({ header: hostile, nested: { err: `bad ${hostile}` } }, `refused ${hostile}`);
    expect(raw).toHaveLength(1);
    const line = lines()[0] as { msg: string; header: string; nested: { err: string } };
    for (const text of [line.msg, line.header, line.nested.err]) expect(hasTerminalControl(text)).toBe(false);
    // Escaped, not dropped: the operator still sees what was sent.
    expect(line.header).toBe("\\u001b[2J\\u001b[31mred\\u009b31m\\u0007\\rover\\b\\u007f");
    // Line breaks and tabs stay as they are (stack traces).
    logger.info('two\nlines\tand a tab, a backslash \\ and a quote "');
    expect(lines()[1].msg).toBe('two\nlines\tand a tab, a backslash \\ and a quote "');
  });

  it("never carry the path, query or credentials of a URL (RPC URLs hold API keys there)", () => {
    const { raw, lines, logger } = capture();
    logger.error(
      {
        rpcUrl: "https://eth-mainnet.g.example.com/v2/AbCdEfSeCrEtKeY123",
        err: "HTTP request failed. URL: https://rpc.example.org/key/0123456789?apikey=s3cr3t Details: 429",
        db: "postgres://postgres:hunter2@db.internal:5432/humanpass",
        origin: "http://attestations-api:8081",
        root: "http://127.0.0.1:8080/",
      },
      "calling wss://node.example.net/ws/v3/TOPSECRET#x",
    );
    expect(raw[0]).not.toMatch(/SeCrEtKeY|0123456789|s3cr3t|hunter2|TOPSECRET/);
    expect(lines()[0]).toMatchObject({
      rpcUrl: "https://eth-mainnet.g.example.com/<redacted>",
      err: "HTTP request failed. URL: https://rpc.example.org/<redacted> Details: 429",
      db: "postgres://db.internal:5432/<redacted>",
      origin: "http://attestations-api:8081",
      root: "http://127.0.0.1:8080/",
      msg: "calling wss://node.example.net/<redacted>",
    });
  });
});

describe("routeConsoleTo", () => {
  let restore = () => {};
  afterEach(() => restore());

  it("sends what libraries write to the console through the logger, at its level, escaped", () => {
    const { lines, logger } = capture("debug");
    restore = routeConsoleTo(logger);
    const client = '{"x402Version":2,\u001b[31m"payload":';
    console.warn(
      "Failed to decode PAYMENT-SIGNATURE header:",
      new SyntaxError(`Unexpected token in ${client}`),
    );
    console.error("fatal: %s", "https://rpc.example.org/v2/KEY");
    console.log("[x402] extension responses: %j", { a: 1 });
    console.debug("detail");
    restore();
    const [warn, error, info, debug] = lines() as Array<{ level: number; msg: string; source: string }>;
    expect(warn).toMatchObject({ level: 40, source: "console" });
    expect(warn.msg).toMatch(/^Failed to decode PAYMENT-SIGNATURE header: SyntaxError: Unexpected token in /);
    expect(warn.msg).toContain('{"x402Version":2,\\u001b[31m"payload":');
    expect(warn.msg).toMatch(/\n\s+at /);
    expect(hasTerminalControl(warn.msg)).toBe(false);
    expect(error).toMatchObject({ level: 50, msg: "fatal: https://rpc.example.org/<redacted>" });
    expect(info).toMatchObject({ level: 30, msg: '[x402] extension responses: {"a":1}' });
    expect(debug).toMatchObject({ level: 20, msg: "detail" });
  });
});
