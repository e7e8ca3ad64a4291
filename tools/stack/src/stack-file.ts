import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { REPO_ROOT } from "@humanpass/testing/service-process";
import type { ServiceName } from "./stack.ts";

/** `make up` writes .run/stack.json; `make compose-up` its own file, passed on as HUMANPASS_STACK_FILE. */
export const STACK_FILE = path.resolve(REPO_ROOT, process.env.HUMANPASS_STACK_FILE || ".run/stack.json");

/** What `make up` started, for `make demo` and `make down`. */
export interface StackFile {
  pid: number;
  servicePids: Record<ServiceName, number>;
  devnetRpcUrl: string;
  chainId: number;
  usdc: string;
  /** The devnet's x402 facilitator HTTP API (`HTTPFacilitatorClient({ url })`). */
  facilitatorUrl?: string;
  prefix: string;
  natsUrl: string;
  /** The NATS user tools read events as, where the server has users (`operator` of users.conf). */
  natsUser?: { user: string; pass: string };
  /** make up's own nats-server, stopped by make down if make up could not stop it. */
  natsPid?: number;
  urls: Record<ServiceName, string>;
  ownershipSchema: string;
  /** Demo agents paired with a verified human (devnet keys; never real funds). */
  pairedAgents: { address: string; did: string; privateKey: string }[];
  /** A funded agent with no human behind it. */
  unpairedAgent: { address: string; did: string; privateKey: string };
}

export function writeStackFile(file: StackFile): void {
  mkdirSync(path.dirname(STACK_FILE), { recursive: true });
  writeFileSync(STACK_FILE, `${JSON.stringify(file, null, 2)}\n`);
}

export function readStackFile(): StackFile | undefined {
  return existsSync(STACK_FILE) ? (JSON.parse(readFileSync(STACK_FILE, "utf8")) as StackFile) : undefined;
}

export function removeStackFile(): void {
  rmSync(STACK_FILE, { force: true });
}
