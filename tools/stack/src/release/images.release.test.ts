// make test-release (vitest --project release): the release path of docs/deploy.md ("Deploying to Kubernetes")
// run for real against a Docker engine and an image registry: `make images PUSH=1` builds the six service images,
// pushes them and prints the values.env lines; the registry must serve each by the printed digest, the images must
// carry the version and the commit, each SBOM must list the service's packages, and the prod overlay must
// validate with those lines in place of the fixture's.
// The registry is RELEASE_TEST_REGISTRY (host:port/path, e.g. a `registry:2` container) or, where none is given,
// a `docker-registry` process (Debian's package, which .ci/docker-engine.sh installs) on a free loopback port: the
// engine pushes to 127.0.0.0/8 over plain HTTP without being told to.

import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { sleep } from "@humanpass/retry";
import { freePort } from "@humanpass/testing/ports";
import { REPO_ROOT } from "@humanpass/testing/service-process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SERVICE_NAMES } from "../stack.ts";

const run = promisify(execFile);
const SERVICES = SERVICE_NAMES;
const VERSION = "0.0.0-release-test";
const MANIFEST_TYPES = [
  "application/vnd.docker.distribution.manifest.v2+json",
  "application/vnd.oci.image.manifest.v1+json",
  "application/vnd.docker.distribution.manifest.list.v2+json",
  "application/vnd.oci.image.index.v1+json",
].join(", ");

const work = mkdtempSync(path.join(tmpdir(), "humanpass-release-"));
let registryProcess: ChildProcess | undefined;
let registry = process.env.RELEASE_TEST_REGISTRY ?? "";
let output = "";
const lines = new Map<string, string>();

async function startRegistry(): Promise<string> {
  const port = await freePort();
  const config = path.join(work, "registry.yml");
  writeFileSync(
    config,
    `version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: ${work}/blobs\nhttp:\n  addr: 127.0.0.1:${port}\n`,
  );
  const log = openSync(path.join(work, "registry.log"), "w");
  registryProcess = spawn("docker-registry", ["serve", config], { stdio: ["ignore", log, log] });
  const failed = new Promise<never>((_, reject) =>
    registryProcess!.once("error", (e) =>
      reject(
        new Error(
          `docker-registry: ${e.message} (install Debian's docker-registry or set RELEASE_TEST_REGISTRY)`,
        ),
      ),
    ),
  );
  const up = (async () => {
    for (let i = 0; i < 100; i++) {
      const ok = await fetch(`http://127.0.0.1:${port}/v2/`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) return `127.0.0.1:${port}/humanpass`;
      await sleep(100);
    }
    throw new Error("docker-registry did not answer /v2/ within 10 s");
  })();
  return Promise.race([up, failed]);
}

beforeAll(async () => {
  if (!registry) registry = await startRegistry();
  const { stdout } = await run("make", ["-s", "images"], {
    cwd: REPO_ROOT,
    env: { ...process.env, PUSH: "1", REGISTRY: registry, VERSION },
    maxBuffer: 16 * 1024 * 1024,
  });
  output = stdout;
  // The lines a deployer would copy into values.env, in the log.
  process.stdout.write(`make images PUSH=1 printed:\n${stdout}`);
  for (const line of stdout.split("\n")) {
    const m = /^([A-Z_]+)=(.+)$/.exec(line.trim());
    if (m) lines.set(m[1]!, m[2]!);
  }
}, 1_800_000);

afterAll(() => {
  registryProcess?.kill("SIGTERM");
  rmSync(work, { recursive: true, force: true });
});

const key = (service: string) => `IMAGE_${service.toUpperCase().replaceAll("-", "_")}`;

describe("make images PUSH=1", () => {
  it("prints a values.env line per service, pinned by digest, and the release", () => {
    expect(lines.get("RELEASE"), output).toBe(VERSION);
    for (const service of SERVICES) {
      expect(lines.get(key(service)), output).toMatch(
        new RegExp(
          `^${registry.replaceAll(".", "\\.")}/${service}:${VERSION.replaceAll(".", "\\.")}@sha256:[0-9a-f]{64}$`,
        ),
      );
    }
  });

  it("pushed every image: the registry serves each manifest by the printed digest", async () => {
    const [host, ...repoPath] = registry.split("/");
    for (const service of SERVICES) {
      const digest = lines.get(key(service))!.split("@")[1]!;
      const url = `http://${host}/v2/${[...repoPath, service].join("/")}/manifests/${digest}`;
      const res = await fetch(url, { method: "HEAD", headers: { accept: MANIFEST_TYPES } });
      expect(res.status, `${service}: HEAD ${url}`).toBe(200);
      expect(res.headers.get("docker-content-digest")).toBe(digest);
    }
  });

  it("tags each image with the version and the commit and labels it with both", async () => {
    const { stdout: head } = await run("git", ["rev-parse", "HEAD"], { cwd: REPO_ROOT });
    const { stdout: dirty } = await run("git", ["status", "--porcelain", "--untracked-files=no"], {
      cwd: REPO_ROOT,
    });
    const revision = `${head.trim()}${dirty.trim() ? "-dirty" : ""}`;
    const commitTag = `${VERSION}-${head.trim().slice(0, 12)}${dirty.trim() ? "-dirty" : ""}`;
    for (const service of SERVICES) {
      const { stdout } = await run("docker", [
        "image",
        "inspect",
        "--format",
        "{{json .Config.Labels}}",
        `${registry}/${service}:${commitTag}`,
      ]);
      const labels = JSON.parse(stdout) as Record<string, string>;
      expect(labels["org.opencontainers.image.version"]).toBe(VERSION);
      expect(labels["org.opencontainers.image.revision"]).toBe(revision);
      expect(labels["org.opencontainers.image.title"]).toBe(`humanpass-${service}`);
    }
  });

  it("writes a CycloneDX SBOM per image that lists the service and its production packages", () => {
    for (const service of SERVICES) {
      const sbom = JSON.parse(
        readFileSync(path.join(REPO_ROOT, ".run/images", `${service}-${VERSION}.cdx.json`), "utf8"),
      );
      expect(sbom.bomFormat).toBe("CycloneDX");
      const names = new Set<string>(
        (sbom.components ?? []).map((c: { group?: string; name: string }) =>
          c.group ? `${c.group}/${c.name}` : c.name,
        ),
      );
      expect(names.has(`@humanpass/${service}`), `${service}: the service itself in its SBOM`).toBe(true);
      expect(names.has("fastify"), `${service}: fastify in its SBOM`).toBe(true);
      expect(names.has("vitest"), `${service}: a dev dependency in its SBOM`).toBe(false);
    }
  });

  it("its lines, put into a values.env, make the prod overlay validate", async () => {
    const fixture = readFileSync(path.join(REPO_ROOT, "deploy/validate/fixtures/prod-values.env"), "utf8");
    const released = fixture
      .split("\n")
      .map((line) => {
        const name = /^([A-Z_]+)=/.exec(line)?.[1];
        return name && lines.has(name) ? `${name}=${lines.get(name)}` : line;
      })
      .join("\n");
    const file = path.join(work, "values.env");
    writeFileSync(file, released);
    const { stdout } = await run(
      process.execPath,
      ["--conditions=@humanpass/source", "src/main.ts", "--values", `prod=${file}`],
      { cwd: path.join(REPO_ROOT, "deploy/validate") },
    );
    expect(stdout).toMatch(/^deploy validation passed/);
    for (const service of SERVICES) expect(released).toContain(lines.get(key(service)));
  });
});
