// The compose binary's reading of the files beside compose.ts's in-process one: every case asserts the in-process
// reading, and compose's own where a compose command exists (CI's .ci/docker-engine.sh installs one, after make
// test has run without it). Where none exists the output says that compose's check was not run.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCompose, readComposeFiles } from "./compose.ts";
import { composeCommand, composeConfig, NO_COMPOSE_COMMAND } from "./compose-cli.ts";
import { REPO_ROOT } from "./paths.ts";

const dir = mkdtempSync(path.join(tmpdir(), "humanpass-compose-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeAll(() => {
  const command = composeCommand();
  console.log(
    command
      ? `compose binary check: ${command.join(" ")} config, beside the in-process check`
      : `compose binary check NOT RUN: ${NO_COMPOSE_COMMAND}; the in-process check (compose.ts) runs alone`,
  );
});

/** Each reader's messages for a file of these services: in-process always, compose's where it exists. */
function readers(name: string, services: string, rest = ""): { by: string; messages: string[] }[] {
  const file = path.join(dir, name);
  const text = `services:\n${services}\n${rest}`;
  writeFileSync(file, text);
  const inProcess = loadCompose([{ where: name, text }]);
  expect(inProcess.resolved).toBeUndefined();
  const found = [{ by: "in-process", messages: inProcess.problems.map((p) => `${p.path} ${p.message}`) }];
  const compose = composeConfig([file]);
  if (!("notRun" in compose)) {
    expect(compose.resolved).toBeUndefined();
    found.push({ by: compose.command, messages: compose.problems.map((p) => p.message) });
  }
  return found;
}

/** The parts of a resolved project the checks read, in one shape for both readers. */
function essentials(resolved: Record<string, any>) {
  return Object.fromEntries(
    Object.entries<any>(resolved.services).map(([name, service]) => [
      name,
      { environment: service.environment ?? {}, depends_on: service.depends_on ?? {} },
    ]),
  );
}

describe("the compose files, read in-process and by compose", () => {
  for (const project of [["docker-compose.yml"], ["docker-compose.yml", "docker-compose.cluster.yml"]]) {
    it(`accepts ${project.join(" + ")}, each service's environment and dependencies resolved alike`, () => {
      const inProcess = loadCompose(readComposeFiles(REPO_ROOT, project));
      expect(inProcess.problems).toEqual([]);
      expect(Object.keys(inProcess.resolved!.services).length).toBeGreaterThan(10);
      const compose = composeConfig(project.map((file) => path.join(REPO_ROOT, file)));
      if (!("notRun" in compose)) {
        expect(compose.problems).toEqual([]);
        expect(essentials(inProcess.resolved!)).toEqual(essentials(compose.resolved!));
      }
    });
  }

  it("rejects a wrong type and an unknown key", () => {
    for (const { by, messages } of readers(
      "types.yml",
      "  api:\n    image: x\n    ports: 5432\n    helthcheck:\n      test: [CMD, 'true']",
    )) {
      expect(messages, by).toContainEqual(expect.stringMatching(/services[./]api[./]ports .*(array|type)/));
      expect(messages, by).toContainEqual(expect.stringContaining("helthcheck"));
    }
  });

  it("rejects a dependency on a service that does not exist", () => {
    for (const { by, messages } of readers(
      "depends.yml",
      "  api:\n    image: x\n    depends_on:\n      cache:\n        condition: service_started",
    ))
      expect(messages, by).toContainEqual(expect.stringMatching(/cache.*undefined|undefined.*cache/));
  });

  it("rejects a named volume that no top-level volumes declares", () => {
    for (const { by, messages } of readers(
      "volumes.yml",
      "  api:\n    image: x\n    volumes:\n      - data:/data",
      "volumes:\n  other:\n",
    ))
      expect(messages, by).toContainEqual(expect.stringMatching(/volume.*"?data\b|\bdata\b.*volume/i));
  });
});
