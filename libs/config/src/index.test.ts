import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { CommonEnv, ConfigError, Env, loadConfig, splitList } from "./index";

const schema = Type.Object({
  PORT: Env.port(8080),
  HOST_URL: Env.url(),
  DEBUG: Env.boolean(false),
  ...CommonEnv,
});

describe("loadConfig", () => {
  it("converts, defaults and types the variables", () => {
    const config = loadConfig(schema, { PORT: "9000", HOST_URL: "https://example.org", DEBUG: "true" });
    expect(config.PORT).toBe(9000);
    expect(config.DEBUG).toBe(true);
    expect(config.NATS_URL).toBe("nats://127.0.0.1:4222");
    expect(config.RATE_LIMIT_MAX).toBe(100);
  });

  it("names a wrong variable and its expected form", () => {
    expect(() => loadConfig(schema, { PORT: "eighty", HOST_URL: "https://x" })).toThrow(
      /PORT: "eighty" is not valid.*a TCP port 0-65535/,
    );
  });

  it("names a missing required variable", () => {
    try {
      loadConfig(schema, { PORT: "1" });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      expect((e as ConfigError).problems).toEqual([
        { variable: "HOST_URL", message: expect.stringMatching(/is required/) },
      ]);
    }
  });

  it("reports a value out of range", () => {
    expect(() => loadConfig(schema, { PORT: "70000", HOST_URL: "https://x" })).toThrow(/PORT/);
    expect(() => loadConfig(schema, { HOST_URL: "https://x", LOG_LEVEL: "loud" })).toThrow(
      /LOG_LEVEL.*one of fatal/,
    );
  });

  it("reads TRUST_PROXY as false, true or a number of proxies", () => {
    const trustProxy = (value?: string) =>
      loadConfig(schema, { HOST_URL: "https://x", TRUST_PROXY: value }).TRUST_PROXY;
    expect([trustProxy(), trustProxy("false"), trustProxy("true"), trustProxy("2")]).toEqual([
      false,
      false,
      true,
      2,
    ]);
    expect(() => trustProxy("yes")).toThrow(/TRUST_PROXY: "yes" is not valid.*number of proxies/);
    expect(() => trustProxy("11")).toThrow(/TRUST_PROXY/);
  });

  it("splits lists", () => {
    expect(splitList(" a, b,,c ")).toEqual(["a", "b", "c"]);
    expect(splitList("")).toEqual([]);
  });
});
