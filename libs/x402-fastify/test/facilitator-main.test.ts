/**
 * `humanpass-evm-facilitator` as a container or `npx` runs it: its own process, settings from the environment,
 * serving the facilitator HTTP API for the chain it is given (what docker compose runs for the devnet), to callers
 * that send its API key; without a key it starts only on a chain it is told is a devnet.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { type Devnet, startDevnet } from "@humanpass/devnet";
import { freePort } from "@humanpass/testing/ports";
import { HTTPFacilitatorClient } from "@x402/core/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const MAIN = new URL("../src/facilitator-main.ts", import.meta.url).pathname;
const NODE_ARGS = ["--conditions=@humanpass/source", MAIN];

let devnet: Devnet;
let child: ChildProcess;
let url: string;
const output: string[] = [];
const API_KEY = "main-test-key";
const run = (env: Record<string, string>) =>
  promisify(execFile)(process.execPath, NODE_ARGS, { env: { ...process.env, ...env } }).catch(
    (error: { code: number; stderr: string }) => error,
  );

beforeAll(async () => {
  devnet = await startDevnet({ accounts: 3, usdcAccounts: 1 });
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  child = spawn(process.execPath, NODE_ARGS, {
    env: {
      ...process.env,
      RPC_URL: devnet.rpcUrl,
      CHAIN_ID: String(devnet.chainId),
      FACILITATOR_PRIVATE_KEY: devnet.accounts[2]!.privateKey,
      FACILITATOR_API_KEY: API_KEY,
      CHAIN_IS_DEVNET: "",
      PORT: String(port),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  createInterface({ input: child.stderr! }).on("line", (line) => output.push(line));
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on("line", (line) => {
      output.push(line);
      if (line.includes('"facilitator ready"')) resolve();
    });
    child.once("exit", (code) => reject(new Error(`exited (${code}): ${output.join("\n")}`)));
  });
});

afterAll(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  }
  await devnet?.stop();
});

describe("humanpass-evm-facilitator", () => {
  it("serves the supported kinds of the chain it is given, settling from the account of its key", async () => {
    const headers = { Authorization: `Bearer ${API_KEY}` };
    const facilitator = new HTTPFacilitatorClient({
      url,
      createAuthHeaders: async () => ({ supported: headers }),
    });
    const supported = await facilitator.getSupported();
    expect(supported.kinds).toContainEqual(
      expect.objectContaining({ scheme: "exact", network: `eip155:${devnet.chainId}` }),
    );
    expect(Object.values(supported.signers).flat()).toContain(devnet.accounts[2]!.address);
  });

  it("answers /readyz once it serves", async () => {
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
  });

  it("answers /settle without its API key 401 unauthorized", async () => {
    const response = await fetch(`${url}/settle`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ code: "unauthorized" });
  });

  it("refuses to start without its settings, saying which, with exit code 64", async () => {
    const failed = await run({
      RPC_URL: "",
      CHAIN_ID: "devnet",
      FACILITATOR_PRIVATE_KEY: "",
      CHAIN_IS_DEVNET: "true",
    });
    expect(failed).toMatchObject({ code: 64 });
    expect((failed as { stderr: string }).stderr).toContain(
      "RPC_URL is not set; FACILITATOR_PRIVATE_KEY is not set; CHAIN_ID must be a chain id",
    );
  });

  it("refuses to start without an API key on a chain it is not told is a devnet", async () => {
    const failed = await run({
      RPC_URL: devnet.rpcUrl,
      CHAIN_ID: "1",
      FACILITATOR_PRIVATE_KEY: devnet.accounts[2]!.privateKey,
      FACILITATOR_API_KEY: "",
      CHAIN_IS_DEVNET: "",
    });
    expect(failed).toMatchObject({ code: 64 });
    expect((failed as { stderr: string }).stderr).toContain(
      "FACILITATOR_API_KEY is not set: give the key your servers will send (Authorization: Bearer …), or set CHAIN_IS_DEVNET=true",
    );
  });
});
