/**
 * @humanpass/events as a subscriber outside the project gets it: `npm pack`, the tarball installed into a throwaway
 * plain-JavaScript project with the team's own NATS client, then a durable subscription, a dead letter and a replay
 * run from there against a real NATS, and a TypeScript consumer type-checked against the shipped declarations.
 */
import { execFile } from "node:child_process";
import { copyFileSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { lstat, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { connectTestNats, deleteTestStreams, REPO_ROOT, testNatsUrl, testTopology } from "@humanpass/testing";
import {
  outsideNpmEnv,
  type PackedPackage,
  packageHygieneProblems,
  packPackage,
  publishDryRun,
  sourceMapsWithoutSources,
} from "@humanpass/testing/packing";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type CloudEvent,
  createCloudEvent,
  type HumanVerifiedData,
  streamName,
  streamSubjects,
  subjectOf,
} from "../src/index.ts";

const run = promisify(execFile);
const PACKAGE_DIR = path.join(REPO_ROOT, "libs/events");
const FIXTURES = path.join(import.meta.dirname, "consumer");
// The client a subscriber already has: the versions this repository is tested with.
const NATS_CLIENT = {
  "@nats-io/transport-node": "3.3.0",
  "@nats-io/jetstream": "3.3.0",
  "@nats-io/nats-core": "3.3.0",
};

const topology = testTopology();
let project: string;
let packed: PackedPackage;
let nc: NatsConnection;

beforeAll(async () => {
  project = mkdtempSync(path.join(tmpdir(), "humanpass-events-consumer-"));
  packed = await packPackage(PACKAGE_DIR, project);
  writeFileSync(
    path.join(project, "package.json"),
    JSON.stringify({
      name: "events-consumer",
      private: true,
      type: "module",
      dependencies: { "@humanpass/events": `file:./${packed.filename}`, ...NATS_CLIENT },
    }),
  );
  for (const file of readdirSync(FIXTURES)) copyFileSync(path.join(FIXTURES, file), path.join(project, file));
  await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"], {
    cwd: project,
    env: outsideNpmEnv(),
    timeout: 300_000,
  });
  nc = await connectTestNats();
  await (await jetstreamManager(nc)).streams.add({
    name: streamName(topology, "AGENT_AUTH"),
    subjects: [streamSubjects(topology, "AGENT_AUTH")],
  });
}, 360_000);

afterAll(async () => {
  if (nc) {
    await deleteTestStreams(nc, topology);
    await nc.close();
  }
  if (project) await rm(project, { recursive: true, force: true });
});

async function publishHumanVerified(
  humanId: string,
  resource: string,
): Promise<CloudEvent<HumanVerifiedData>> {
  const event = createCloudEvent({
    source: "agent-auth",
    type: "human_verified",
    data: {
      humanId,
      verifiedAt: new Date().toISOString(),
      humanDid: `did:iden3:billions:main:h${humanId}`,
      resource,
    },
  });
  await jetstream(nc).publish(subjectOf(topology, "AGENT_AUTH", "human_verified"), JSON.stringify(event), {
    msgID: event.id,
  });
  return event;
}

describe("@humanpass/events packed and installed outside the workspace", () => {
  it("ships compiled JavaScript, declarations, source maps with their sources, README, LICENSE and CHANGELOG only", async () => {
    const files = packed.files.map((f) => f.path);
    expect(files).toContain("dist/index.js");
    expect(files).toContain("dist/index.d.ts");
    const manifest = JSON.parse(await readFile(path.join(PACKAGE_DIR, "package.json"), "utf8"));
    expect(packageHygieneProblems(manifest, files)).toEqual([]);
    expect(await sourceMapsWithoutSources(path.join(project, "node_modules/@humanpass/events"))).toEqual([]);
  });

  it("passes npm publish --dry-run", async () => {
    expect(await publishDryRun(PACKAGE_DIR)).toMatchObject({
      name: "@humanpass/events",
      version: expect.stringMatching(/^0\./),
    });
  });

  it("is installed as a plain package with its NATS client as the subscriber's own (peer) dependency", async () => {
    const installed = path.join(project, "node_modules/@humanpass/events");
    expect((await lstat(installed)).isSymbolicLink()).toBe(false);
    const manifest = JSON.parse(await readFile(path.join(installed, "package.json"), "utf8"));
    expect(manifest.private).toBeUndefined();
    expect(Object.keys(manifest.peerDependencies).sort()).toEqual([
      "@nats-io/jetstream",
      "@nats-io/nats-core",
    ]);
    // One client in the project: the package uses the subscriber's, it brings none of its own.
    const nested = path.join(installed, "node_modules/@nats-io");
    await expect(lstat(nested)).rejects.toThrow(/ENOENT/);
  });

  it("types the handler's event from the catalog, for a TypeScript consumer", async () => {
    const tsc = path.join(REPO_ROOT, "node_modules/typescript/bin/tsc");
    const flags = ["--noEmit", "--strict", "--module", "nodenext", "--moduleResolution", "nodenext"];
    await run(process.execPath, [tsc, ...flags, "--target", "es2022", "typed.ts"], { cwd: project });
    // The same consumer with the wrong payload field is refused: the check above can fail.
    const wrong = (await readFile(path.join(project, "typed.ts"), "utf8")).replace(
      "const humanId: string = event.data.humanId;",
      "const humanId: string = event.data.nullifier;",
    );
    writeFileSync(path.join(project, "wrong.ts"), wrong);
    const refused = await run(process.execPath, [tsc, ...flags, "--target", "es2022", "wrong.ts"], {
      cwd: project,
    }).catch((e: { stdout: string }) => e.stdout);
    expect(refused).toMatch(/wrong\.ts.*Property 'nullifier' does not exist/);
  });

  it("subscribes durably with the subscriber's own connection: each event handled once after its retries, a refused one and an invalid one dead-lettered, then replayed from a time", async () => {
    const since = Date.now() - 1_000;
    const plain = [
      await publishHumanVerified("1", "https://acme.example/a"),
      await publishHumanVerified("2", "https://acme.example/b"),
    ];
    const flaky = await publishHumanVerified("3", "https://acme.example/flaky");
    const refused = await publishHumanVerified("4", "https://acme.example/refused");
    const invalid = createCloudEvent({
      source: "agent-auth",
      type: "human_verified",
      data: { humanId: "5", verifiedAt: new Date().toISOString(), humanDid: "did:x", resource: "r" },
    });
    await jetstream(nc).publish(
      subjectOf(topology, "AGENT_AUTH", "human_verified"),
      JSON.stringify({ ...invalid, data: { ...invalid.data, humanId: 5 } }),
    );
    const last = await publishHumanVerified("6", "https://acme.example/c");

    const { stdout } = await run(process.execPath, ["consume.mjs"], {
      cwd: project,
      env: {
        ...outsideNpmEnv(),
        NATS_URL: testNatsUrl(),
        EVENTS_PREFIX: topology.prefix,
        EXPECTED_OUTCOMES: "6",
        SINCE_MS: String(since),
      },
      timeout: 60_000,
    });
    const outcome = JSON.parse(stdout) as {
      handled: { id: string; humanId: string; attempt: number }[];
      deadLetters: { id: string; attempts: number; error: string }[];
      replayed: string[];
      count: number;
    };
    expect(outcome.handled).toEqual([
      { id: plain[0]!.id, humanId: "1", attempt: 1 },
      { id: plain[1]!.id, humanId: "2", attempt: 1 },
      { id: last.id, humanId: "6", attempt: 1 },
      { id: flaky.id, humanId: "3", attempt: 2 },
    ]);
    expect(outcome.deadLetters).toEqual(
      expect.arrayContaining([
        { id: invalid.id, attempts: 1, error: expect.stringMatching(/^invalid event/) },
        { id: refused.id, attempts: 3, error: "refused by the handler" },
      ]),
    );
    expect(outcome.deadLetters).toHaveLength(2);
    // The replay hands over every valid event stored since then, in stream order, the refused one included.
    expect(outcome.replayed).toEqual([plain[0]!.id, plain[1]!.id, flaky.id, refused.id, last.id]);
    expect(outcome.count).toBe(5);
  });
});
