import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import path from "node:path";
import { ConfigError } from "@humanpass/config";
import { REPO_ROOT } from "@humanpass/testing";
import { describe, expect, it } from "vitest";
import { checkSettings, DEVELOPMENT_ADMIN_TOKENS } from "../src/index.ts";

const REAL_TOKEN = "k3Jx9-operator-chosen-token-0f3c2a9b7d";

function problemsOf(settings: Parameters<typeof checkSettings>[0]): { variable: string; message: string }[] {
  try {
    checkSettings(settings);
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
  return [];
}

describe("settings under NODE_ENV=production", () => {
  it("refuses every published development admin token", () => {
    for (const token of DEVELOPMENT_ADMIN_TOKENS)
      expect(
        problemsOf({ NODE_ENV: "production", ADMIN_TOKEN: token, WEBHOOK_ALLOWED_NETWORKS: "" }),
      ).toEqual([
        { variable: "ADMIN_TOKEN", message: expect.stringContaining("refused when NODE_ENV=production") },
      ]);
  });

  it("knows every admin token the repository publishes (compose, make up, the k8s dev overlay)", () => {
    const published = [
      [/ADMIN_TOKEN: \$\{WEBHOOKS_ADMIN_TOKEN:-([^}]+)\}/, "docker-compose.yml"],
      [/DEV_WEBHOOKS_ADMIN_TOKEN = "([^"]+)"/, "tools/stack/src/stack.ts"],
      [/- ADMIN_TOKEN=(\S+)/, "deploy/k8s/overlays/dev/kustomization.yaml"],
    ] as const;
    for (const [pattern, file] of published) {
      const token = pattern.exec(readFileSync(path.join(REPO_ROOT, file), "utf8"))?.[1];
      expect([file, token && DEVELOPMENT_ADMIN_TOKENS.includes(token)]).toEqual([file, true]);
    }
  });

  it("refuses allow-listed networks reaching beyond private ones, and accepts the private ones an operator names", () => {
    for (const wide of ["0.0.0.0/0", "::/0", "8.0.0.0/8", "10.0.0.0/7", "2000::/3", "2002::/16", "1.1.1.1"])
      expect([
        wide,
        problemsOf({
          NODE_ENV: "production",
          ADMIN_TOKEN: REAL_TOKEN,
          WEBHOOK_ALLOWED_NETWORKS: `10.0.0.0/8,${wide}`,
        }),
      ]).toEqual([
        wide,
        [
          {
            variable: "WEBHOOK_ALLOWED_NETWORKS",
            message: expect.stringMatching(/^\S+: wider than private/),
          },
        ],
      ]);
    expect(
      problemsOf({
        NODE_ENV: "production",
        ADMIN_TOKEN: REAL_TOKEN,
        WEBHOOK_ALLOWED_NETWORKS: "10.20.0.0/16,172.16.5.0/24,192.168.1.7,127.0.0.0/8,fd12:3456::/32",
      }),
    ).toEqual([]);
  });

  it("leaves development alone: make up's token and allow-list", () => {
    expect(
      problemsOf({
        NODE_ENV: "development",
        ADMIN_TOKEN: DEVELOPMENT_ADMIN_TOKENS[0]!,
        WEBHOOK_ALLOWED_NETWORKS: "0.0.0.0/0",
      }),
    ).toEqual([]);
  });

  it("stops the service at start-up, exit 78, naming both settings", async () => {
    const child = spawn(
      process.execPath,
      ["--conditions=@humanpass/source", path.join(REPO_ROOT, "services/webhooks/src/main.ts")],
      {
        cwd: REPO_ROOT,
        env: {
          PATH: process.env.PATH ?? "",
          NODE_ENV: "production",
          ADMIN_TOKEN: DEVELOPMENT_ADMIN_TOKENS[0]!,
          WEBHOOK_ALLOWED_NETWORKS: "0.0.0.0/0",
          // Never reached: the settings are refused before anything connects.
          DATABASE_URL: "postgres://nobody@127.0.0.1:1/none",
          NATS_URL: "nats://127.0.0.1:1",
        },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let output = "";
    child.stderr?.on("data", (c) => {
      output += c;
    });
    const [code] = await once(child, "exit");
    expect(code).toBe(78);
    expect(output).toContain("ADMIN_TOKEN: is a development token");
    expect(output).toContain("WEBHOOK_ALLOWED_NETWORKS: 0.0.0.0/0: wider than private");
  });
});
