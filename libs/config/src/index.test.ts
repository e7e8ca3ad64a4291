import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import {
  CommonEnv,
  ConfigError,
  Env,
  loadConfig,
  placeholderIn,
  refusePlaceholdersInProduction,
  splitList,
} from "./index.ts";

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

  it("reads TRUST_PROXY as a list of proxy addresses and CIDRs, refusing the old count and true/false", () => {
    const trustProxy = (value?: string) =>
      loadConfig(schema, { HOST_URL: "https://x", TRUST_PROXY: value }).TRUST_PROXY;
    expect(trustProxy()).toBe("");
    expect(trustProxy("10.0.0.0/8, 192.168.1.7,fd00::/8 ,::1")).toBe("10.0.0.0/8, 192.168.1.7,fd00::/8 ,::1");
    for (const old of ["1", "2", "true", "false"]) {
      expect(() => trustProxy(old)).toThrow(
        new RegExp(
          `TRUST_PROXY: "${old}" is not valid.*addresses or CIDRs of the proxies.*count or true/false.*refused`,
        ),
      );
    }
    for (const bad of [
      "10.0.0.0/33",
      "10.0.0.0/",
      "proxy.internal",
      "10.0.0.1:80",
      "::1/129",
      "10.0.0.0/8,x",
    ]) {
      expect(() => trustProxy(bad), bad).toThrow(/TRUST_PROXY/);
    }
  });

  it("splits lists", () => {
    expect(splitList(" a, b,,c ")).toEqual(["a", "b", "c"]);
    expect(splitList("")).toEqual([]);
  });
});

describe("refusePlaceholdersInProduction", () => {
  const problemsOf = (env: Record<string, string>) => {
    try {
      refusePlaceholdersInProduction(loadConfig(schema, env));
      return [];
    } catch (e) {
      return (e as ConfigError).problems;
    }
  };

  it("names every setting still holding a placeholder, and not its value", () => {
    const problems = problemsOf({
      NODE_ENV: "production",
      HOST_URL: "https://verifier.humanpass.example",
      DATABASE_URL: "postgres://verifier:s3cret@db.humanpass.example:5432/humanpass",
      EVENTS_PREFIX: "",
      NATS_USER: "did:iden3:billions:main:replace-with-the-verifier-did",
      NATS_PASSWORD: "0x0000000000000000000000000000000000000000",
    });
    expect(problems).toEqual([
      {
        variable: "HOST_URL",
        message: expect.stringMatching(/^a host under \.example is a placeholder: set/),
      },
      {
        variable: "DATABASE_URL",
        message: expect.stringMatching(/^a host under \.example is a placeholder/),
      },
      { variable: "NATS_USER", message: expect.stringMatching(/^a placeholder is left/) },
      { variable: "NATS_PASSWORD", message: expect.stringMatching(/^the zero address is a placeholder/) },
    ]);
    expect(JSON.stringify(problems)).not.toContain("s3cret");
  });

  it("lets examples be outside production, and real values in it", () => {
    expect(problemsOf({ HOST_URL: "https://verifier.humanpass.example" })).toEqual([]);
    expect(problemsOf({ NODE_ENV: "development", HOST_URL: "https://verifier.humanpass.example" })).toEqual(
      [],
    );
    expect(problemsOf({ NODE_ENV: "production", HOST_URL: "https://verifier.humanpass.io" })).toEqual([]);
  });

  it("tells a placeholder from a value that only looks like one", () => {
    expect(placeholderIn("0x0000000000000000000000000000000000000000")).toBeDefined();
    expect(
      placeholderIn("0x5FbDB2315678afecb367f032d93F642f64180aa3,0x0000000000000000000000000000000000000000"),
    ).toBeDefined();
    // A 32-byte id of zeros is no address; example.com is a real domain; a path segment is no host.
    expect(placeholderIn(`0x${"0".repeat(64)}`)).toBeUndefined();
    expect(placeholderIn("https://pay.example.com")).toBeUndefined();
    expect(placeholderIn("/srv/example/routes.json")).toBeUndefined();
    expect(placeholderIn("nats://nats.example:4222")).toBeDefined();
  });
});
