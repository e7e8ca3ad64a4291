// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the fixtures are Compose files, whose variables are written ${…}
import { describe, expect, it } from "vitest";
import { loadCompose, readComposeFiles } from "./compose.ts";
import type { ComposeVariables } from "./interpolate.ts";
import { REPO_ROOT } from "./paths.ts";

const minimal = (services: string, rest = "") => `services:\n${services}\n${rest}`;
const load = (text: string, variables?: ComposeVariables) =>
  loadCompose([{ where: "docker-compose.yml", text }], variables);
const messages = (text: string) => load(text).problems.map((p) => p.message);

describe("loadCompose", () => {
  it("accepts the committed docker-compose.yml and resolves it with the variables' defaults", () => {
    const { problems, warnings, resolved } = loadCompose(readComposeFiles(REPO_ROOT, ["docker-compose.yml"]));
    expect(problems).toEqual([]);
    expect(warnings).toEqual([]);
    expect(Object.keys(resolved!.services)).toEqual(
      expect.arrayContaining([
        "verifier",
        "chain-indexer",
        "attestations-api",
        "agent-auth",
        "payment-gateway",
      ]),
    );
    const agentAuth = resolved!.services["agent-auth"];
    // Its own role, not the superuser (the postgres-roles step creates it); the shared settings of x-common-env.
    expect(agentAuth.environment.DATABASE_URL).toBe(
      "postgres://agent_auth:dev-agent-auth-db@postgres:5432/humanpass",
    );
    expect(agentAuth.environment.NATS_URL).toBe("nats://nats:4222");
    expect(agentAuth.environment.RATE_LIMIT_MAX).toBe("100");
    // $$ reaches the container as $.
    expect(agentAuth.healthcheck.test.join(" ")).toContain("/dev/tcp/127.0.0.1/$PORT");
  });

  it("merges docker-compose.cluster.yml over it as compose -f … -f … does", () => {
    const { problems, resolved } = loadCompose(
      readComposeFiles(REPO_ROOT, ["docker-compose.yml", "docker-compose.cluster.yml"]),
    );
    expect(problems).toEqual([]);
    const seeds = "nats://nats:4222,nats://nats-1:4222,nats://nats-2:4222";
    const verifier = resolved!.services.verifier;
    expect(verifier.environment.NATS_URL).toBe(seeds);
    expect(verifier.environment.DATABASE_URL).toMatch(/^postgres:\/\/verifier:/);
    expect(Object.keys(resolved!.services["nats-topology"].depends_on)).toEqual(
      expect.arrayContaining(["nats", "nats-1", "nats-2"]),
    );
    expect(resolved!.services.nats.command).toEqual([
      "--config",
      "/etc/nats/nats.conf",
      "--server_name",
      "nats-0",
    ]);
    // nats keeps its data volume: compose merges volumes by their target.
    expect(resolved!.services.nats.volumes).toContain("natsdata:/data");
    expect(Object.keys(resolved!.volumes)).toEqual(
      expect.arrayContaining(["natsdata", "natsdata-1", "natsdata-2"]),
    );
  });

  it("interpolates as compose does", () => {
    const text = minimal(
      [
        "  api:",
        "    image: ${IMAGE:-api:1}",
        "    environment:",
        "      SET: ${SET}",
        "      EMPTY_DEFAULT: ${EMPTY:-fallback}",
        "      EMPTY_KEPT: ${EMPTY-fallback}",
        "      NESTED: ${MISSING:-${SET}-x}",
        "      PLUS: ${SET:+on}",
        "      PLUS_UNSET: ${MISSING:+on}",
        "      BARE: $SET/$$SET",
        "      UNSET: ${NOWHERE}",
        "      FROM_ENV:",
      ].join("\n"),
    );
    const { problems, warnings, resolved } = load(text, { SET: "v", EMPTY: "", FROM_ENV: "e" });
    expect(problems).toEqual([]);
    expect(resolved!.services.api.image).toBe("api:1");
    expect(resolved!.services.api.environment).toEqual({
      SET: "v",
      EMPTY_DEFAULT: "fallback",
      EMPTY_KEPT: "",
      NESTED: "v-x",
      PLUS: "on",
      PLUS_UNSET: "",
      BARE: "v/$SET",
      UNSET: "",
      FROM_ENV: "e",
    });
    expect(warnings).toEqual([
      "docker-compose.yml: the NOWHERE variable is not set and has no default: a blank string is used",
    ]);
  });

  it("reads list environments, and a variable listed without a value from the variables or as unset", () => {
    const { resolved } = load(
      minimal("  api:\n    image: x\n    environment:\n      - A=1=2\n      - B\n      - C"),
      {
        C: "c",
      },
    );
    expect(resolved!.services.api.environment).toEqual({ A: "1=2", B: null, C: "c" });
  });

  it("rejects a required variable without a value, and a $ that starts no variable", () => {
    expect(messages(minimal("  api:\n    image: ${IMAGE:?set IMAGE to our image}"))).toEqual([
      "required variable IMAGE is missing a value: set IMAGE to our image",
    ]);
    expect(load(minimal("  api:\n    image: x\n    command: echo $1")).problems).toEqual([
      expect.objectContaining({
        path: "/services/api/command",
        message: expect.stringMatching(/^invalid interpolation/),
      }),
    ]);
    expect(messages(minimal("  api:\n    image: ${IMAGE"))).toEqual([
      expect.stringMatching(/^invalid interpolation: no closing }/),
    ]);
  });

  it("validates the interpolated file: a default of the wrong shape is refused", () => {
    expect(
      load(minimal("  api:\n    image: x\n    stop_grace_period: ${GRACE:-forty seconds}")).problems,
    ).toEqual([
      expect.objectContaining({
        path: "/services/api/stop_grace_period",
        message: expect.stringContaining("duration"),
      }),
    ]);
  });

  it("rejects what the Compose Specification forbids", () => {
    const { problems } = load(
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
      load(minimal(`  api:\n    image: x\n    helthcheck:\n      test: ["CMD", "true"]`)).problems,
    ).toEqual([
      expect.objectContaining({
        path: "/services/api",
        message: expect.stringContaining('"additionalProperty":"helthcheck"'),
      }),
    ]);
  });

  it("rejects references to a service, volume, network, secret or config that is not defined", () => {
    const problems = load(
      minimal(
        [
          "  api:",
          "    image: x",
          "    depends_on: [cache]",
          "    volumes_from: [store]",
          "    volumes: [data:/data, ./here:/here, other:/other]",
          "    networks: [back]",
          "    secrets: [key]",
          "    configs: [{ source: conf }]",
          "  sidecar:",
          "    image: y",
          "    network_mode: service:gone",
        ].join("\n"),
        "volumes:\n  other:\n",
      ),
    ).problems;
    expect(problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
      '/services/api/depends_on/cache: service "api" depends on undefined service "cache"',
      '/services/api/volumes_from/0: service "api" refers to undefined service store',
      '/services/api/volumes/0: service "api" refers to undefined volume data',
      '/services/api/networks/back: service "api" refers to undefined network back',
      '/services/api/secrets/0: service "api" refers to undefined secret key',
      '/services/api/configs/0: service "api" refers to undefined config conf',
      '/services/sidecar/network_mode: service "sidecar" refers to undefined service gone',
    ]);
  });

  it("rejects a service_healthy dependency on a service without a healthcheck, which compose finds only at up", () => {
    const { problems } = load(
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

  it("checks an overriding file's references against the merged project", () => {
    const base = { where: "base.yml", text: minimal("  db:\n    image: y") };
    const good = { where: "more.yml", text: minimal("  api:\n    image: x\n    depends_on: [db]") };
    const bad = { where: "more.yml", text: minimal("  api:\n    image: x\n    depends_on: [cache]") };
    expect(loadCompose([base, good]).problems).toEqual([]);
    expect(loadCompose([base, bad]).problems).toEqual([
      {
        where: "base.yml + more.yml",
        path: "/services/api/depends_on/cache",
        message: 'service "api" depends on undefined service "cache"',
      },
    ]);
  });

  it("reports YAML that does not parse", () => {
    expect(messages("services:\n  api: [unclosed")[0]).toMatch(/^not valid YAML/);
  });
});
