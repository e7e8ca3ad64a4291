import { describe, expect, it } from "vitest";
import { parseSince, parseTailArgs } from "./args.ts";
import { parseDeadLettersArgs } from "./dead-letters.ts";

const now = new Date("2026-11-22T12:00:00.000Z");

describe("parseSince", () => {
  it("reads durations back from now", () => {
    expect(parseSince("10m", now).toISOString()).toBe("2026-11-22T11:50:00.000Z");
    expect(parseSince("30s", now).toISOString()).toBe("2026-11-22T11:59:30.000Z");
    expect(parseSince("2h", now).toISOString()).toBe("2026-11-22T10:00:00.000Z");
    expect(parseSince("1d", now).toISOString()).toBe("2026-11-21T12:00:00.000Z");
  });

  it("reads ISO 8601 times", () => {
    expect(parseSince("2026-11-01T08:30:00Z", now).toISOString()).toBe("2026-11-01T08:30:00.000Z");
  });

  it("names what it cannot read", () => {
    expect(() => parseSince("10 minutes", now)).toThrow(/"10 minutes" is neither a duration/);
    expect(() => parseSince("2026-13-45T99:00:00Z", now)).toThrow(/neither/);
  });
});

describe("parseTailArgs", () => {
  it("collects subjects and options, with env defaults", () => {
    const options = parseTailArgs(
      ["chain.>", "--json", "--since=5m", "payments.*", "--count", "3"],
      { NATS_URL: "nats://n:4222", EVENTS_PREFIX: "dev" },
      now,
    );
    expect(options).toEqual({
      subjects: ["chain.>", "payments.*"],
      json: true,
      since: new Date("2026-11-22T11:55:00.000Z"),
      count: 3,
      prefix: "dev",
      servers: "nats://n:4222",
    });
  });

  it("defaults to local NATS, new events only, no prefix", () => {
    expect(parseTailArgs([], {}, now)).toEqual({
      subjects: [],
      json: false,
      prefix: "",
      servers: "nats://127.0.0.1:4222",
    });
  });

  it("rejects unknown options, missing values and bad counts", () => {
    expect(() => parseTailArgs(["--follow"], {})).toThrow("unknown option --follow");
    expect(() => parseTailArgs(["--since"], {})).toThrow("--since needs a value");
    expect(() => parseTailArgs(["--count", "0"], {})).toThrow('--count: "0" is not a positive integer');
    expect(() => parseTailArgs(["--prefix", "Bad-Prefix"], {})).toThrow(/--prefix/);
  });
});

describe("parseDeadLettersArgs", () => {
  it("lists by default and replays named sequences or --all", () => {
    expect(parseDeadLettersArgs(["--consumer", "gw", "--json"], { EVENTS_PREFIX: "dev" })).toEqual({
      replay: false,
      consumer: "gw",
      json: true,
      prefix: "dev",
      servers: "nats://127.0.0.1:4222",
    });
    expect(parseDeadLettersArgs(["replay", "3", "7"], {}).replay).toEqual([3, 7]);
    expect(parseDeadLettersArgs(["replay", "--all"], {}).replay).toBe("all");
  });

  it("refuses a replay without a choice, or with both, and sequences outside replay", () => {
    expect(() => parseDeadLettersArgs(["replay"], {})).toThrow(/sequence numbers to replay, or --all/);
    expect(() => parseDeadLettersArgs(["replay", "3", "--all"], {})).toThrow(/or --all/);
    expect(() => parseDeadLettersArgs(["3"], {})).toThrow('unexpected argument "3"');
    expect(() => parseDeadLettersArgs(["--all"], {})).toThrow(/--all is for/);
  });
});
