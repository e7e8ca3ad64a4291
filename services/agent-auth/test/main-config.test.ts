import { spawn } from "node:child_process";
import path from "node:path";
import { REPO_ROOT } from "@humanpass/testing";
import { describe, expect, it } from "vitest";

describe("agent-auth start-up", () => {
  it("refuses a bad setting before connecting to anything, naming the variable (exit 78)", async () => {
    const child = spawn(
      process.execPath,
      ["--conditions=@humanpass/source", path.join(REPO_ROOT, "services/agent-auth/src/main.ts")],
      {
        cwd: REPO_ROOT,
        env: {
          ...process.env,
          ATTESTATIONS_API_RETRIES: "lots",
          OWNERSHIP_SCHEMA_ID: "0x1234",
          TRUST_PROXY: "1",
        },
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    let stderr = "";
    child.stderr!.on("data", (chunk) => {
      stderr += chunk;
    });
    const code = await new Promise((resolve) => child.once("exit", resolve));
    expect(code).toBe(78);
    expect(stderr).toMatch(/ATTESTATIONS_API_RETRIES: "lots" is not valid/);
    expect(stderr).toMatch(/OWNERSHIP_SCHEMA_ID: "0x1234" is not valid.*32-byte hex/);
    // The proxy count of earlier versions, refused with the form that replaced it.
    expect(stderr).toMatch(/TRUST_PROXY: "1" is not valid.*addresses or CIDRs of the proxies in front/);
  });
});
