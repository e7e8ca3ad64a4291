/**
 * The SDK as an integrator gets it, run from its documentation: `npm run pack:sdk` (each package built by its own
 * prepack) packs @humanpass/identity, @humanpass/attestations-client, @humanpass/human-proof,
 * @humanpass/x402-fastify and @humanpass/events, the tarballs installed side by side (as the docs' install line
 * does, no registry look-up for them) into throwaway projects outside the workspace (plain JavaScript ESM, nothing linked to this repository), one per end of
 * the declared `@x402/core` range; into each, every JavaScript block of docs/sdk.md under the file name its info
 * string gives (```js title="server-express.mjs"), run as they stand against the devnet, the facilitator HTTP API
 * and a running attestations-api of the stack `make up` starts. Only what differs from `make up` (ports, URLs) and
 * the agents' keys are given in the environment: the docs' defaults for the rest are checked against the devnet.
 * The lowest set's Fastify server and agent also run on the lowest Node the packages declare (`engines`), fetched
 * from the npm registry as an integrator's machine would have it.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { lstat, readFile, rm } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { connectTestNats, createTestDatabase, type TestDatabase, testNatsUrl } from "@humanpass/testing";
import { nodeRelease } from "@humanpass/testing/node-release";
import {
  outsideNpmEnv,
  type PackedPackage,
  packageHygieneProblems,
  publishDryRun,
  sourceMapsWithoutSources,
  specifiersNotAsEmitted,
} from "@humanpass/testing/packing";
import { freePort } from "@humanpass/testing/ports";
import { REPO_ROOT } from "@humanpass/testing/service-process";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { erc20Abi } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomPrefix, type Stack, startStack } from "../src/stack.ts";

const run = promisify(execFile);
const SDK_PACKAGES = ["identity", "attestations-client", "human-proof", "x402-fastify", "events"];
/** The lowest Node the SDK packages declare in `engines`: the oldest line in support. */
const LOWEST_NODE = "22.12.0";
const DOCS = readFileSync(path.join(REPO_ROOT, "docs/sdk.md"), "utf8");

/** The JavaScript blocks of the docs by the file name of their info string; `null` names a block without one. */
function documentedFiles(markdown: string): Map<string | null, string> {
  const files = new Map<string | null, string>();
  for (const [, info, code] of markdown.matchAll(/^```(js[^\n]*)\n([\s\S]*?)^```$/gm)) {
    const name = /\btitle="([^"]+)"/.exec(info!)?.[1] ?? null;
    files.set(name, code!);
  }
  return files;
}

/** The tarballs (by file name) the docs' `npm install` lines name. */
function documentedTarballs(markdown: string): string[] {
  return [...markdown.matchAll(/npm install ([^`\n]+)/g)].flatMap(([, args]) =>
    args!
      .split(/\s+/)
      .filter((spec) => spec.endsWith(".tgz"))
      .map((spec) => path.basename(spec)),
  );
}

/** Every registry package an `npm install` of the docs names, with the version it pins ("" for none). */
function documentedInstalls(markdown: string): Map<string, string> {
  const installs = new Map<string, string>();
  for (const [, args] of markdown.matchAll(/npm install ([^`\n]+)/g)) {
    for (const spec of args!.split(/\s+/).filter((s) => s && s !== "…" && !s.endsWith(".tgz"))) {
      const at = spec.lastIndexOf("@");
      installs.set(at > 0 ? spec.slice(0, at) : spec, at > 0 ? spec.slice(at + 1) : "");
    }
  }
  return installs;
}

const FILES = documentedFiles(DOCS);
const FRAMEWORKS = ["express", "hono", "fastify"] as const;
type Framework = (typeof FRAMEWORKS)[number];
const AGENTS = { ours: "agent.mjs", "Billions'": "agent-billions.mjs" } as const;
// The latest release of each, as the docs' install lines name them.
const LATEST: Record<string, string> = {
  "@billionsnetwork/x402-human-proof-client": "0.1.7",
  "@x402/core": "2.27.0",
  "@x402/evm": "2.27.0",
  "@x402/express": "2.27.0",
  "@x402/fetch": "2.27.0",
  "@x402/hono": "2.27.0",
  "@hono/node-server": "1.19.19",
  express: "5.1.0",
  fastify: "5.4.0",
  hono: "4.13.19",
  viem: "2.57.20",
};
const X402_IN_STEP = ["@x402/core", "@x402/evm", "@x402/express", "@x402/fetch"];
const PEER_RANGE: string = JSON.parse(
  readFileSync(path.join(REPO_ROOT, "libs/human-proof/package.json"), "utf8"),
).peerDependencies["@x402/core"];
const LOWEST = PEER_RANGE.replace(/^\^/, "");

interface VersionSet {
  name: string;
  x402: string;
  frameworks: readonly Framework[];
  dependencies: Record<string, string>;
}
/**
 * Both ends of the declared range, every flow on each. @x402/hono pins @x402/core to its own minor (~2.27.0) and
 * has no release at the lowest end (2.19, then 2.25): Hono runs on the latest set only.
 */
const VERSION_SETS: VersionSet[] = [
  { name: "latest", x402: LATEST["@x402/core"]!, frameworks: FRAMEWORKS, dependencies: LATEST },
  {
    name: "lowest",
    x402: LOWEST,
    frameworks: ["express", "fastify"],
    dependencies: {
      ...Object.fromEntries(Object.entries(LATEST).filter(([name]) => name !== "@x402/hono")),
      ...Object.fromEntries(X402_IN_STEP.map((name) => [name, LOWEST])),
    },
  },
];
const STANDARD = 10_000n;
const DISCOUNTED = 1_000n;

let packed: Record<string, PackedPackage>;
let tarballs: string | undefined;
const projects: Record<string, string> = {};
let database: TestDatabase;
let stack: Stack;
let lowestNode: string;
const logs: string[] = [];

/** The one documented pack command, as a fresh clone runs it: every SDK tarball, each package built by its prepack. */
async function pack(destination: string): Promise<void> {
  const { stdout } = await run("npm", ["run", "-s", "pack:sdk", "--", destination], {
    cwd: REPO_ROOT,
    env: outsideNpmEnv(),
    maxBuffer: 64 * 1024 * 1024,
    timeout: 480_000,
  });
  const report = JSON.parse(stdout) as PackedPackage[];
  packed = Object.fromEntries(report.map((p) => [p.name.slice("@humanpass/".length), p]));
}

/** A new project with the tarballs, the set's registry dependencies and the docs' files. */
async function install(set: VersionSet, tarballs: string): Promise<string> {
  const project = mkdtempSync(path.join(tmpdir(), `humanpass-sdk-consumer-${set.name}-`));
  const tarball = (name: string) => `file:${path.join(tarballs, packed[name]!.filename)}`;
  writeFileSync(
    path.join(project, "package.json"),
    JSON.stringify({
      name: "sdk-consumer",
      private: true,
      type: "module",
      // Every tarball side by side, as the docs' install line: @humanpass/human-proof's own dependencies on
      // @humanpass/identity and @humanpass/attestations-client resolve to these, never to the registry.
      dependencies: {
        ...Object.fromEntries(SDK_PACKAGES.map((name) => [`@humanpass/${name}`, tarball(name)])),
        ...set.dependencies,
      },
    }),
  );
  for (const [name, code] of FILES) if (name) writeFileSync(path.join(project, name), code);
  await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"], {
    cwd: project,
    env: outsideNpmEnv(),
    timeout: 480_000,
  });
  return project;
}

/** Starts a documented server with plain node and resolves with the URL it prints once listening. */
async function startServer(
  project: string,
  script: string,
  servers: ChildProcess[],
  node = process.execPath,
): Promise<string> {
  const port = await freePort();
  const child = spawn(node, [script], {
    cwd: project,
    env: {
      ...outsideNpmEnv(),
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      FACILITATOR_URL: stack.facilitator.url,
      ATTESTATIONS_API_URL: stack.urls["attestations-api"],
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  servers.push(child);
  createInterface({ input: child.stderr! }).on("line", (line) => logs.push(`${script} | ${line}`));
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).on("line", (line) => {
      const listening = /^listening (\S+)$/.exec(line);
      if (listening) resolve(listening[1]!);
      else logs.push(`${script} | ${line}`);
    });
    child.once("exit", (code) => reject(new Error(`${script} exited (${code}): ${logs.join("\n")}`)));
  });
}

async function stopServers(servers: ChildProcess[]): Promise<void> {
  await Promise.all(
    servers.map((child) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      return exited;
    }),
  );
}

/** One run of a documented agent, which prints the status and the body of what it paid for. */
async function agentPays(
  project: string,
  script: string,
  agentAccount: number,
  url: string,
  node = process.execPath,
) {
  const { stdout } = await run(node, [script], {
    cwd: project,
    env: {
      ...outsideNpmEnv(),
      AGENT_KEY: stack.devnet.accounts[agentAccount]!.privateKey,
      ATTESTATIONS_API_URL: stack.urls["attestations-api"],
      RESOURCE_URL: url,
    },
  });
  const printed = /^(\d{3}) (.*)$/s.exec(stdout.trim());
  if (!printed) throw new Error(`${script} printed ${stdout}`);
  return { status: Number(printed[1]), body: printed[2] };
}

const usdcOf = (address: `0x${string}`) =>
  stack.devnet.client.readContract({
    address: stack.devnet.addresses.usdc,
    abi: erc20Abi,
    functionName: "balanceOf",
    args: [address],
  });

/** What `agentAccount` paid on each of `times` runs of `script`, and what the payee received in all. */
async function payRepeatedly(
  project: string,
  script: string,
  agentAccount: number,
  url: string,
  times: number,
  node = process.execPath,
) {
  const agent = stack.devnet.accounts[agentAccount]!.address;
  const payTo = stack.devnet.accounts[9]!.address;
  const payToBefore = await usdcOf(payTo);
  const paid: bigint[] = [];
  for (let i = 0; i < times; i++) {
    const before = await usdcOf(agent);
    const result = await agentPays(project, script, agentAccount, url, node);
    expect({ ...result, body: JSON.parse(result.body) }).toEqual({
      status: 200,
      body: { city: "Zurich", temperatureC: 7 },
    });
    paid.push(before - (await usdcOf(agent)));
  }
  return { paid, received: (await usdcOf(payTo)) - payToBefore };
}

beforeAll(async () => {
  const destination = mkdtempSync(path.join(tmpdir(), "humanpass-sdk-tarballs-"));
  tarballs = destination;
  database = await createTestDatabase("sdk_consumer");
  const installed = pack(destination).then(() =>
    Promise.all(VERSION_SETS.map(async (set) => [set.name, await install(set, destination)] as const)),
  );
  const [started, sets, lowest] = await Promise.all([
    startStack({
      databaseUrl: database.url,
      natsUrl: testNatsUrl(),
      prefix: randomPrefix(),
      log: (service, line) => logs.push(`${service} | ${line}`),
      logLevel: "warn",
    }),
    installed,
    nodeRelease(LOWEST_NODE, path.join(REPO_ROOT, ".run")),
  ]);
  stack = started;
  lowestNode = lowest;
  Object.assign(projects, Object.fromEntries(sets));
}, 600_000);

afterAll(async () => {
  await stack?.stop();
  await database?.drop();
  const { jetstreamManager } = await import("@nats-io/jetstream");
  const conn = await connectTestNats();
  const jsm = await jetstreamManager(conn);
  for await (const s of jsm.streams.list()) {
    if (stack && s.config.name.startsWith(`${stack.prefix.toUpperCase()}_`))
      await jsm.streams.delete(s.config.name);
  }
  await conn.close();
  for (const dir of [tarballs, ...Object.values(projects)])
    if (dir) await rm(dir, { recursive: true, force: true });
}, 180_000);

describe("docs/sdk.md", () => {
  it("has every JavaScript block named as the file the consumer test runs", () => {
    expect([...FILES.keys()].sort()).toEqual(
      [
        "agent-billions.mjs",
        "agent.mjs",
        "paid-route.mjs",
        "server-express.mjs",
        "server-fastify.mjs",
        "server-hono.mjs",
      ].sort(),
    );
  });

  it("installs the tarballs npm run pack:sdk makes, at their version", () => {
    expect(documentedTarballs(DOCS).sort()).toEqual(
      ["identity", "attestations-client", "human-proof", "x402-fastify"]
        .map((n) => packed[n]!.filename)
        .sort(),
    );
  });

  it("installs the versions the consumer test runs, and all it runs", () => {
    const documented = documentedInstalls(DOCS);
    for (const [name, version] of documented) {
      if (name.startsWith("@humanpass/")) expect(SDK_PACKAGES).toContain(name.slice("@humanpass/".length));
      else expect({ name, version }).toEqual({ name, version: LATEST[name] });
    }
    expect([...documented.keys()]).toEqual(expect.arrayContaining(Object.keys(LATEST)));
  });

  it("defaults to the devnet of make up where the test gives no setting", () => {
    const network = `"eip155:${stack.devnet.chainId}"`;
    const usdc = `"${stack.devnet.addresses.usdc}"`;
    const schema = `"${stack.seed.schemas.agentOwnership}"`;
    const payTo = `"${stack.devnet.accounts[9]!.address}"`;
    const expected = {
      "paid-route.mjs": [network, usdc, schema, payTo],
      "agent.mjs": [network, usdc],
      "agent-billions.mjs": [network, usdc, schema],
    };
    for (const [file, defaults] of Object.entries(expected))
      expect({ file, missing: defaults.filter((d) => !FILES.get(file)!.includes(d)) }).toEqual({
        file,
        missing: [],
      });
  });
});

describe("the SDK packed and installed outside the workspace", () => {
  it("ships compiled JavaScript, declarations, source maps with their sources, README, LICENSE and CHANGELOG only", async () => {
    for (const name of SDK_PACKAGES) {
      const files = packed[name]!.files.map((f) => f.path);
      expect(files).toContain("dist/index.js");
      expect(files).toContain("dist/index.d.ts");
      const manifest = JSON.parse(await readFile(path.join(REPO_ROOT, "libs", name, "package.json"), "utf8"));
      expect({ name, problems: packageHygieneProblems(manifest, files) }).toEqual({ name, problems: [] });
      const installed = path.join(projects.latest!, "node_modules/@humanpass", name);
      expect({ name, lacking: await sourceMapsWithoutSources(installed) }).toEqual({ name, lacking: [] });
      // As emitted by tsc: `./x.js`, which Node resolves without a loader of the integrator's.
      expect({ name, specifiers: await specifiersNotAsEmitted(installed) }).toEqual({ name, specifiers: [] });
    }
  });

  it(`declares Node ${LOWEST_NODE} or later, the release the lowest set also runs on`, async () => {
    for (const name of SDK_PACKAGES) {
      const manifest = JSON.parse(await readFile(path.join(REPO_ROOT, "libs", name, "package.json"), "utf8"));
      expect({ name, engines: manifest.engines }).toEqual({ name, engines: { node: `>=${LOWEST_NODE}` } });
    }
    const { stdout } = await run(lowestNode, ["-v"]);
    expect(stdout.trim()).toBe(`v${LOWEST_NODE}`);
  });

  it("passes npm publish --dry-run", async () => {
    for (const name of SDK_PACKAGES) {
      expect(await publishDryRun(path.join(REPO_ROOT, "libs", name))).toMatchObject({
        name: `@humanpass/${name}`,
        version: expect.stringMatching(/^0\./),
      });
    }
  });

  it("declares one @x402/core range, whose ends the version sets are", async () => {
    for (const name of ["human-proof", "x402-fastify"]) {
      const manifest = JSON.parse(await readFile(path.join(REPO_ROOT, "libs", name, "package.json"), "utf8"));
      expect(manifest.peerDependencies["@x402/core"]).toBe(PEER_RANGE);
    }
    expect(VERSION_SETS.map((set) => set.x402)).toEqual(["2.27.0", "2.23.0"]);
  });

  it.each(VERSION_SETS.map((set) => [set.name, set] as const))(
    "is installed as plain packages (%s set), with the set's @x402/core",
    async (_name, set) => {
      const project = projects[set.name]!;
      for (const name of SDK_PACKAGES) {
        const installed = path.join(project, "node_modules/@humanpass", name);
        expect((await lstat(installed)).isSymbolicLink()).toBe(false);
        const manifest = JSON.parse(await readFile(path.join(installed, "package.json"), "utf8"));
        expect(manifest.private).toBeUndefined();
        expect(manifest.version).toMatch(/^0\./);
      }
      const { stdout } = await run("npm", ["ls", "@x402/core", "--all", "--parseable", "--long"], {
        cwd: project,
        env: outsideNpmEnv(),
      });
      // One copy of @x402/core, the set's, whatever asks for it.
      expect([
        ...new Set(
          stdout
            .trim()
            .split("\n")
            .map((line) => line.split(":")[1]),
        ),
      ]).toEqual([`@x402/core@${set.x402}`]);
      expect(path.relative(REPO_ROOT, project).startsWith("..")).toBe(true);
    },
  );
});

for (const set of VERSION_SETS)
  describe(`the docs' files on x402 ${set.x402} (${set.name} set)`, () => {
    const servers: ChildProcess[] = [];
    const urls: Partial<Record<Framework, string>> = {};

    beforeAll(async () => {
      const started = await Promise.all(
        set.frameworks.map((framework) =>
          startServer(projects[set.name]!, `server-${framework}.mjs`, servers),
        ),
      );
      set.frameworks.forEach((framework, i) => {
        urls[framework] = started[i];
      });
    });
    afterAll(() => stopServers(servers));

    it.each(set.frameworks)("%s: HEAD on the paid route is refused without payment", async (framework) => {
      const response = await fetch(`${urls[framework]}/weather`, { method: "HEAD" });
      expect(response.status).toBe(402);
    });

    it.each(set.frameworks)(
      "%s: a forged Host does not change the challenge's signed domain",
      async (framework) => {
        const url = new URL(`${urls[framework]}/weather`);
        const header = await new Promise<string>((resolve, reject) => {
          request(url, { headers: { host: "evil.example" } }, (response) => {
            response.resume();
            resolve(String(response.headers["payment-required"]));
          })
            .on("error", reject)
            .end();
        });
        const challenge = decodePaymentRequiredHeader(header).extensions?.["human-proof"] as {
          info: { domain: string; uri: string };
        };
        expect(challenge.info).toMatchObject({ domain: url.hostname, uri: url.href });
      },
    );

    // Agent 4's human and agent 7's are different humans; each server counts uses in its own process.
    for (const framework of set.frameworks) {
      for (const [client, script] of Object.entries(AGENTS)) {
        it(`${framework}, ${client} client: the discounted tier until max_use_exceeded, then the standard tier`, async () => {
          const account = client === "ours" ? 4 : 7;
          const url = `${urls[framework]}/weather`;
          const { paid, received } = await payRepeatedly(projects[set.name]!, script, account, url, 3);
          expect(paid).toEqual([DISCOUNTED, DISCOUNTED, STANDARD]);
          expect(received).toBe(2n * DISCOUNTED + STANDARD);
        });
      }
    }
  });

describe(`the docs' Fastify server and agent on Node ${LOWEST_NODE} (lowest set)`, () => {
  const servers: ChildProcess[] = [];
  let url: string;

  beforeAll(async () => {
    url = `${await startServer(projects.lowest!, "server-fastify.mjs", servers, lowestNode)}/weather`;
  });
  afterAll(() => stopServers(servers));

  // A server process of its own counts uses afresh, so agent 4 gets the discounted tier again.
  it("the discounted tier until max_use_exceeded, then the standard tier", async () => {
    const { paid, received } = await payRepeatedly(projects.lowest!, AGENTS.ours, 4, url, 3, lowestNode);
    expect(paid).toEqual([DISCOUNTED, DISCOUNTED, STANDARD]);
    expect(received).toBe(2n * DISCOUNTED + STANDARD);
  });
});
