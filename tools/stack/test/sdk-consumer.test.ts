/**
 * The SDK as an integrator gets it: `npm pack` of @humanpass/identity, @humanpass/attestations-client,
 * @humanpass/human-proof and @humanpass/x402-fastify, the tarballs installed into a throwaway project outside the workspace (plain JavaScript
 * ESM, nothing linked to this repository), then servers (Express, Hono, Fastify) and agents of that project
 * (./sdk-consumer/*.mjs, copied there) against the devnet, the facilitator HTTP API and a running attestations-api
 * of the stack `make up` starts.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { copyFileSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { lstat, readFile, rm } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { connectTestNats, createTestDatabase, type TestDatabase, testNatsUrl } from "@humanpass/testing";
import {
  outsideNpmEnv,
  type PackedPackage,
  packageHygieneProblems,
  packPackage,
  publishDryRun,
  sourceMapsWithoutSources,
} from "@humanpass/testing/packing";
import { freePort } from "@humanpass/testing/ports";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { erc20Abi } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../src/processes";
import { randomPrefix, type Stack, startStack } from "../src/stack";

const run = promisify(execFile);
const SDK_PACKAGES = ["identity", "attestations-client", "human-proof", "x402-fastify"];
const FIXTURES = path.join(import.meta.dirname, "sdk-consumer");
// What the integrator installs next to the SDK: the versions this repository is tested with.
const INTEGRATOR_DEPENDENCIES = {
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
const FRAMEWORKS = ["express", "hono", "fastify"] as const;
const STANDARD = 10_000n;
const DISCOUNTED = 1_000n;

const outsideEnv = outsideNpmEnv;

let project: string;
let packed: Record<string, PackedPackage>;
let database: TestDatabase;
let stack: Stack;
const servers: ChildProcess[] = [];
const urls: Partial<Record<(typeof FRAMEWORKS)[number], string>> = {};
const logs: string[] = [];

async function packAndInstall(): Promise<void> {
  packed = {};
  for (const name of SDK_PACKAGES)
    packed[name] = await packPackage(path.join(REPO_ROOT, "libs", name), project);
  const tarball = (name: string) => `file:./${packed[name]!.filename}`;
  writeFileSync(
    path.join(project, "package.json"),
    JSON.stringify({
      name: "sdk-consumer",
      private: true,
      type: "module",
      dependencies: {
        "@humanpass/identity": tarball("identity"),
        "@humanpass/attestations-client": tarball("attestations-client"),
        "@humanpass/human-proof": tarball("human-proof"),
        "@humanpass/x402-fastify": tarball("x402-fastify"),
        ...INTEGRATOR_DEPENDENCIES,
      },
      // @humanpass/human-proof asks for @humanpass/identity and @humanpass/attestations-client 0.1.0 (which asks
      // for @humanpass/identity too): these tarballs, never a registry look-up.
      overrides: {
        "@humanpass/identity": tarball("identity"),
        "@humanpass/attestations-client": tarball("attestations-client"),
      },
    }),
  );
  for (const file of readdirSync(FIXTURES)) copyFileSync(path.join(FIXTURES, file), path.join(project, file));
  await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"], {
    cwd: project,
    env: outsideEnv(),
    timeout: 480_000,
  });
}

function serverEnv(facilitatorAccount: number): Record<string, string> {
  return {
    FACILITATOR_URL: stack.facilitator.url,
    CHAIN_ID: String(stack.devnet.chainId),
    RPC_URL: stack.devnet.rpcUrl,
    USDC: stack.devnet.addresses.usdc,
    PAY_TO: stack.devnet.accounts[9]!.address,
    FACILITATOR_KEY: stack.devnet.accounts[facilitatorAccount]!.privateKey,
    ATTESTATIONS_API_URL: stack.urls["attestations-api"],
    OWNERSHIP_SCHEMA: stack.seed.schemas.agentOwnership,
  };
}

/** Starts one of the project's servers with plain node and resolves with the URL it prints once listening. */
async function startServer(script: string, env: Record<string, string>): Promise<string> {
  const port = await freePort();
  const child = spawn(process.execPath, [script], {
    cwd: project,
    env: { ...outsideEnv(), ...env, PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` },
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

/** One payment by an agent script of the project, as the agent reports it. */
async function agentPays(script: string, agentAccount: number, url: string) {
  const { stdout } = await run(process.execPath, [script, url], {
    cwd: project,
    env: {
      ...outsideEnv(),
      AGENT_KEY: stack.devnet.accounts[agentAccount]!.privateKey,
      ATTESTATIONS_API_URL: stack.urls["attestations-api"],
      CHAIN_ID: String(stack.devnet.chainId),
      USDC: stack.devnet.addresses.usdc,
      OWNERSHIP_SCHEMA: stack.seed.schemas.agentOwnership,
    },
  });
  return JSON.parse(stdout) as { status: number; body: unknown; transaction?: string | null };
}

const usdcOf = (address: `0x${string}`) =>
  stack.devnet.client.readContract({
    address: stack.devnet.addresses.usdc,
    abi: erc20Abi,
    functionName: "balanceOf",
    args: [address],
  });

/** What `agentAccount` paid on each of `times` payments, and what the payee received in all. */
async function payRepeatedly(agentAccount: number, url: string, times: number) {
  const agent = stack.devnet.accounts[agentAccount]!.address;
  const payTo = stack.devnet.accounts[9]!.address;
  const payToBefore = await usdcOf(payTo);
  const paid: bigint[] = [];
  for (let i = 0; i < times; i++) {
    const before = await usdcOf(agent);
    const result = await agentPays("agent.mjs", agentAccount, url);
    expect(result).toMatchObject({ status: 200, body: { city: "Zurich" }, transaction: expect.any(String) });
    paid.push(before - (await usdcOf(agent)));
  }
  return { paid, received: (await usdcOf(payTo)) - payToBefore };
}

beforeAll(async () => {
  project = mkdtempSync(path.join(tmpdir(), "humanpass-sdk-consumer-"));
  database = await createTestDatabase("sdk_consumer");
  const [started] = await Promise.all([
    startStack({
      databaseUrl: database.url,
      natsUrl: testNatsUrl(),
      prefix: randomPrefix(),
      log: (service, line) => logs.push(`${service} | ${line}`),
      logLevel: "warn",
    }),
    packAndInstall(),
  ]);
  stack = started;
  // Accounts 8 and 11 settle (one each, so their nonces never interleave); 9 receives every payment.
  // Express and Hono settle through the stack's facilitator HTTP API; Fastify in process from account 11.
  [urls.express, urls.hono, urls.fastify] = await Promise.all([
    startServer("express-server.mjs", serverEnv(11)),
    startServer("hono-server.mjs", serverEnv(11)),
    startServer("fastify-server.mjs", serverEnv(11)),
  ]);
}, 600_000);

afterAll(async () => {
  await Promise.all(
    servers.map((child) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      return exited;
    }),
  );
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
  if (project) await rm(project, { recursive: true, force: true });
}, 180_000);

describe("the SDK packed and installed outside the workspace", () => {
  it("ships compiled JavaScript, declarations, source maps with their sources, README, LICENSE and CHANGELOG only", async () => {
    for (const name of SDK_PACKAGES) {
      const files = packed[name]!.files.map((f) => f.path);
      expect(files).toContain("dist/index.js");
      expect(files).toContain("dist/index.d.ts");
      const manifest = JSON.parse(await readFile(path.join(REPO_ROOT, "libs", name, "package.json"), "utf8"));
      expect({ name, problems: packageHygieneProblems(manifest, files) }).toEqual({ name, problems: [] });
      const installed = path.join(project, "node_modules/@humanpass", name);
      expect({ name, lacking: await sourceMapsWithoutSources(installed) }).toEqual({ name, lacking: [] });
    }
  });

  it("passes npm publish --dry-run", async () => {
    for (const name of SDK_PACKAGES) {
      expect(await publishDryRun(path.join(REPO_ROOT, "libs", name))).toMatchObject({
        name: `@humanpass/${name}`,
        version: expect.stringMatching(/^0\./),
      });
    }
  });

  it("declares the @x402/core range it is tested at", async () => {
    for (const name of ["human-proof", "x402-fastify"]) {
      const manifest = JSON.parse(await readFile(path.join(REPO_ROOT, "libs", name, "package.json"), "utf8"));
      expect(manifest.peerDependencies["@x402/core"]).toBe("^2.23.0");
    }
    expect(INTEGRATOR_DEPENDENCIES["@x402/core"]).toBe("2.27.0");
  });

  it("is installed as plain packages, not links into this repository", async () => {
    for (const name of SDK_PACKAGES) {
      const installed = path.join(project, "node_modules/@humanpass", name);
      expect((await lstat(installed)).isSymbolicLink()).toBe(false);
      const manifest = JSON.parse(await readFile(path.join(installed, "package.json"), "utf8"));
      expect(manifest.private).toBeUndefined();
      expect(manifest.version).toMatch(/^0\./);
    }
    expect(path.relative(REPO_ROOT, project).startsWith("..")).toBe(true);
  });

  it.each(FRAMEWORKS)("%s: HEAD on the paid route is refused without payment", async (framework) => {
    const response = await fetch(`${urls[framework]}/weather`, { method: "HEAD" });
    expect(response.status).toBe(402);
  });

  it.each(FRAMEWORKS)(
    "%s: a forged Host does not change the challenge's signed domain",
    async (framework) => {
      const url = new URL(`${urls[framework]}/weather?city=Zurich`);
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

  it("Express (@x402/express + @humanpass/human-proof/server, the stack's facilitator): the agent pays the discounted tier until max_use_exceeded, then the standard tier", async () => {
    const { paid, received } = await payRepeatedly(4, `${urls.express}/weather`, 3);
    expect(paid).toEqual([DISCOUNTED, DISCOUNTED, STANDARD]);
    expect(received).toBe(2n * DISCOUNTED + STANDARD);
  });

  it("Hono (@x402/hono + @humanpass/human-proof/server, the stack's facilitator): the agent pays the discounted tier until max_use_exceeded, then the standard tier", async () => {
    const { paid, received } = await payRepeatedly(5, `${urls.hono}/weather`, 3);
    expect(paid).toEqual([DISCOUNTED, DISCOUNTED, STANDARD]);
    expect(received).toBe(2n * DISCOUNTED + STANDARD);
  });

  it("Fastify (@humanpass/x402-fastify): the agent pays the discounted tier until max_use_exceeded, then the standard tier", async () => {
    const { paid, received } = await payRepeatedly(6, `${urls.fastify}/weather`, 3);
    expect(paid).toEqual([DISCOUNTED, DISCOUNTED, STANDARD]);
    expect(received).toBe(2n * DISCOUNTED + STANDARD);
  });

  it("Billions' published client (0.1.7) pays the Express server's discounted tier", async () => {
    const agent = stack.devnet.accounts[7]!.address;
    const before = await usdcOf(agent);
    const result = await agentPays("billions-agent.mjs", 7, `${urls.express}/weather`);
    expect(result).toMatchObject({ status: 200, body: { city: "Zurich" } });
    expect(before - (await usdcOf(agent))).toBe(DISCOUNTED);
  });
});
