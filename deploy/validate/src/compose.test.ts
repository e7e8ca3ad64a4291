import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { validateCompose } from "./compose.ts";
import { repoPath } from "./paths.ts";

const minimal = (services: string, volumes = "") => `services:\n${services}\n${volumes}`;

describe("validateCompose", () => {
  it("accepts the committed docker-compose.yml", () => {
    expect(validateCompose(readFileSync(repoPath("docker-compose.yml"), "utf8"))).toEqual([]);
  });

  it("rejects what the Compose Specification forbids", () => {
    const problems = validateCompose(
      minimal(
        `  api:\n    image: x\n    depends_on:\n      db:\n        condition: service_ready\n  db:\n    image: y\n    restart: sometimes-maybe\n    ports: 5432`,
      ),
    );
    expect(problems.map((p) => p.path)).toEqual(
      expect.arrayContaining(["/services/api/depends_on/db/condition", "/services/db/ports"]),
    );
  });

  it("rejects an unknown service key", () => {
    expect(
      validateCompose(minimal(`  api:\n    image: x\n    helthcheck:\n      test: ["CMD", "true"]`)),
    ).toEqual([
      expect.objectContaining({
        path: "/services/api",
        message: expect.stringContaining('"additionalProperty":"helthcheck"'),
      }),
    ]);
  });

  it("rejects a service_healthy dependency on a service without a healthcheck, which compose finds only at up", () => {
    const problems = validateCompose(
      minimal(
        `  api:\n    image: x\n    depends_on:\n      db:\n        condition: service_healthy\n      cache:\n        condition: service_healthy\n  db:\n    image: y\n  cache:\n    image: z\n    healthcheck:\n      test: ["CMD", "true"]`,
      ),
    );
    expect(problems).toEqual([
      {
        where: "docker-compose.yml",
        path: "/services/api/depends_on/db",
        message: "waits for db to be healthy, but db has no healthcheck",
      },
    ]);
  });

  it("reports YAML that does not parse", () => {
    expect(validateCompose("services:\n  api: [unclosed")[0]!.message).toMatch(/^not valid YAML/);
  });
});
