import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { composeCommand, composeConfig } from "./compose-cli.ts";
import { repoPath } from "./paths.ts";

const dir = mkdtempSync(path.join(tmpdir(), "humanpass-compose-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Has compose read a file of these services; returns its messages. */
function messagesFor(name: string, services: string, rest = ""): string[] {
  const file = path.join(dir, name);
  writeFileSync(file, `services:\n${services}\n${rest}`);
  const { command, problems, resolved } = composeConfig(file);
  expect(command).toBeDefined();
  expect(resolved).toBeUndefined();
  return problems.map((p) => p.message);
}

describe("composeConfig", () => {
  it("has a compose command on this machine (CI installs Debian's docker-compose: .ci/docker-engine.sh)", () => {
    expect(composeCommand()).toBeDefined();
  });

  it("accepts the committed docker-compose.yml and resolves it with the variables' defaults", () => {
    const { command, problems, resolved } = composeConfig(repoPath("docker-compose.yml"));
    expect(command).toMatch(/^docker(-| )compose$/);
    expect(problems).toEqual([]);
    expect(Object.keys(resolved!.services)).toEqual(
      expect.arrayContaining([
        "verifier",
        "chain-indexer",
        "attestations-api",
        "agent-auth",
        "payment-gateway",
      ]),
    );
    // Its own role, not the superuser (the postgres-roles step creates it).
    expect(resolved!.services["agent-auth"].environment.DATABASE_URL).toBe(
      "postgres://agent_auth:dev-agent-auth-db@postgres:5432/humanpass",
    );
  });

  it("rejects a wrong type and an unknown key", () => {
    const messages = messagesFor(
      "types.yml",
      "  api:\n    image: x\n    ports: 5432\n    helthcheck:\n      test: [CMD, 'true']",
    );
    expect(messages).toContainEqual(expect.stringMatching(/services\.api\.ports .*(array|type)/));
    expect(messages).toContainEqual(expect.stringContaining("helthcheck"));
  });

  it("rejects a dependency on a service that does not exist", () => {
    expect(
      messagesFor(
        "depends.yml",
        "  api:\n    image: x\n    depends_on:\n      cache:\n        condition: service_started",
      ),
    ).toContainEqual(expect.stringMatching(/cache.*undefined|undefined.*cache/));
  });

  it("rejects a named volume that no top-level volumes declares", () => {
    expect(
      messagesFor(
        "volumes.yml",
        "  api:\n    image: x\n    volumes:\n      - data:/data",
        "volumes:\n  other:\n",
      ),
    ).toContainEqual(expect.stringMatching(/volume.*"?data\b|\bdata\b.*volume/i));
  });
});
