/**
 * `make compose-up` picks its images as a user's machine needs: the upstream images, pulled, when a registry
 * answers; the local stand-ins, said in one line, when none does. Run against a fake `docker` first on PATH that
 * records every call (and the image variables compose would read) and answers as an engine would, with or without
 * a registry in reach; nothing reaches a real engine (DOCKER_HOST points nowhere). The stack never answers behind
 * the fake, so make stops at the readiness wait, bounded to a second here.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { REPO_ROOT } from "@humanpass/testing/service-process";
import { afterAll, describe, expect, it } from "vitest";

const dir = mkdtempSync(path.join(tmpdir(), "fake-docker-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Answers `info`, `compose version` and everything else with success, except a pull while FAKE_REGISTRY is down
// (with the daemon's error, which the scripts must not pass on) and `image inspect` of an upstream image (none
// is in the engine); stand-ins count as built already, so no debootstrap runs.
writeFileSync(
  path.join(dir, "docker"),
  `#!/bin/bash
echo "docker $* | POSTGRES_IMAGE=\${POSTGRES_IMAGE:-} NODE_IMAGE=\${NODE_IMAGE:-}" >>"$FAKE_DOCKER_LOG"
args=" $* "
case "$args" in
  *" pull "*)
    if [ "$FAKE_REGISTRY" = down ]; then
      echo "Error response from daemon: Get \\"https://registry-1.docker.io/v2/\\": dial tcp: lookup registry-1.docker.io: no such host" >&2
      exit 1
    fi ;;
  *" image inspect humanpass-local/"*) ;;
  *" image inspect "*) echo "Error: No such image" >&2; exit 1 ;;
  *" version "*) echo "20.10.24" ;;
esac
exit 0
`,
);
chmodSync(path.join(dir, "docker"), 0o755);

function composeUp(registry: "up" | "down") {
  const log = path.join(dir, `calls-${registry}.log`);
  writeFileSync(log, "");
  const run = spawnSync("make", ["-s", "compose-up"], {
    cwd: REPO_ROOT,
    encoding: "utf8",
    timeout: 300_000,
    env: {
      ...process.env,
      PATH: `${dir}:${process.env.PATH}`,
      FAKE_DOCKER_LOG: log,
      FAKE_REGISTRY: registry,
      DOCKER_HOST: `unix://${dir}/no-engine.sock`,
      COMPOSE_PROJECT_NAME: `fake-${registry}`,
      HUMANPASS_STACK_FILE: path.join(dir, "stack.json"),
      COMPOSE_READY_TIMEOUT_S: "1",
      // Ports nothing listens on, so the readiness wait finds no other stack.
      VERIFIER_PORT: "9",
      ATTESTATIONS_API_PORT: "9",
      AGENT_AUTH_PORT: "9",
      CHAIN_INDEXER_PORT: "9",
      PAYMENT_GATEWAY_PORT: "9",
      LOCAL_IMAGES: "",
      POSTGRES_IMAGE: "",
      NODE_IMAGE: "",
    },
  });
  const calls = readFileSync(log, "utf8").split("\n").filter(Boolean);
  return { calls, output: `${run.stdout}${run.stderr}` };
}

describe("make compose-up", () => {
  it("pulls the upstream images and builds and runs on them when a registry answers", () => {
    const { calls, output } = composeUp("up");
    expect(calls).toContainEqual(
      expect.stringMatching(
        /^docker compose pull -q postgres nats proxy otel-collector jaeger prometheus \|/,
      ),
    );
    expect(calls).toContainEqual(expect.stringMatching(/^docker pull -q node:\S+ \|/));
    const up = calls.find((c) => / up -d /.test(c));
    expect(up).toMatch(/POSTGRES_IMAGE= NODE_IMAGE=$/);
    expect(calls.filter((c) => /humanpass-local/.test(c))).toEqual([]);
    expect(output).not.toMatch(/stand-in/);
    expect(output).toMatch(/not ready after 1 s/);
  });

  it("falls back to the local stand-ins in one line when no registry answers", () => {
    const { calls, output } = composeUp("down");
    expect(calls).toContainEqual(expect.stringMatching(/ pull -q postgres /));
    const up = calls.find((c) => / up -d /.test(c));
    expect(up).toMatch(/POSTGRES_IMAGE=humanpass-local\/postgres:16 NODE_IMAGE=humanpass-local\/node:\S+$/);
    expect(output.split("\n").filter((l) => /registry/.test(l))).toEqual([
      "compose: no image registry answered (compose pull failed); using the local stand-ins of deploy/local-images (LOCAL_IMAGES=1 skips the pull)",
    ]);
    expect(output).not.toMatch(/Error response from daemon/);
  });
});
