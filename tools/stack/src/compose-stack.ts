// make compose-up, after `docker compose up`: waits until every service answers /readyz through the proxy, records
// the demo humans as `make up` does, writes the stack file `make demo` reads and prints the URLs.
// Reads the published ports from the same variables docker-compose.yml does; the devnet's addresses and keys from
// the `devnet ready` line of its log.

import path from "node:path";
import { didFromAddress } from "@humanpass/identity";
import { sleep } from "@humanpass/retry";
import { REPO_ROOT } from "@humanpass/testing/service-process";
import { type DevnetSummary, devnetSummary } from "./compose-devnet.ts";
import { recordDemoHumans } from "./demo-humans.ts";
import { DEMO_NULLIFIER_SESSION_ID, SERVICE_NAMES, type ServiceName } from "./stack.ts";
import { STACK_FILE, writeStackFile } from "./stack-file.ts";

const env = process.env;
const port = (name: string, fallback: number) => Number(env[name] || fallback);
const PORT_VARS: Record<ServiceName, [string, number]> = {
  verifier: ["VERIFIER_PORT", 8080],
  "attestations-api": ["ATTESTATIONS_API_PORT", 8081],
  "agent-auth": ["AGENT_AUTH_PORT", 8082],
  "chain-indexer": ["CHAIN_INDEXER_PORT", 8083],
  "payment-gateway": ["PAYMENT_GATEWAY_PORT", 4021],
  webhooks: ["WEBHOOKS_PORT", 8084],
};
const urls = Object.fromEntries(
  SERVICE_NAMES.map((n) => [n, `http://127.0.0.1:${port(...PORT_VARS[n])}`]),
) as Record<ServiceName, string>;
const devnetRpcUrl = `http://127.0.0.1:${port("DEVNET_PORT", 58545)}`;
const facilitatorUrl = `http://127.0.0.1:${port("FACILITATOR_PORT", 4022)}`;
const natsUrl = `nats://127.0.0.1:${port("NATS_PORT", 54222)}`;
const databaseUrl = `postgres://postgres:${env.POSTGRES_PASSWORD || "humanpass"}@127.0.0.1:${port("POSTGRES_PORT", 55432)}/humanpass`;
const timeoutMs = Number(env.COMPOSE_READY_TIMEOUT_S || 300) * 1000;
const out = (line: string) => process.stdout.write(`${line}\n`);

const started = Date.now();
const ready = async (url: string) =>
  fetch(`${url}/readyz`, { signal: AbortSignal.timeout(3_000) }).then(
    (r) => r.status === 200,
    () => false,
  );
let pending: ServiceName[] = [...SERVICE_NAMES];
let summary: DevnetSummary | undefined;
while (pending.length > 0 || !summary) {
  if (Date.now() - started > timeoutMs) {
    process.stderr.write(
      `compose: not ready after ${timeoutMs / 1000} s: ${[...pending, ...(summary ? [] : ["devnet"])].join(", ")}\n`,
    );
    process.exit(1);
  }
  await sleep(1_000);
  const answers = await Promise.all(pending.map((n) => ready(urls[n])));
  pending = pending.filter((_, i) => !answers[i]);
  summary ??= await devnetSummary().catch(() => undefined);
}

await recordDemoHumans({
  databaseUrl,
  prefix: "",
  nullifierSessionId: DEMO_NULLIFIER_SESSION_ID,
  humans: summary.seed.humans.map((h) => ({ ...h, iden3Id: BigInt(h.iden3Id) }) as never),
});

const agent = (i: number) => {
  const account = summary.accounts[i]!;
  return { address: account.address, did: didFromAddress(account.address), privateKey: account.privateKey };
};
writeStackFile({
  pid: 0,
  servicePids: Object.fromEntries(SERVICE_NAMES.map((n) => [n, 0])) as Record<ServiceName, number>,
  devnetRpcUrl,
  chainId: summary.chainId,
  usdc: summary.usdc,
  facilitatorUrl,
  prefix: "",
  natsUrl,
  natsUser: { user: "operator", pass: process.env.NATS_OPERATOR_PASSWORD ?? "dev-operator" },
  urls,
  ownershipSchema: summary.seed.schemas.agentOwnership,
  pairedAgents: [4, 5, 6, 7].map(agent),
  unpairedAgent: agent(10),
});

const width = Math.max(...SERVICE_NAMES.map((n) => n.length));
out("");
out(
  `humanpass is up in containers (ready ${((Date.now() - started) / 1000).toFixed(1)} s after compose up).`,
);
out("");
for (const name of SERVICE_NAMES)
  out(`  ${name.padEnd(width)}  ${urls[name].padEnd(24)} docs: ${urls[name]}/docs`);
out(`  ${"devnet".padEnd(width)}  ${devnetRpcUrl} (chain id ${summary.chainId})`);
out(
  `  ${"facilitator".padEnd(width)}  ${facilitatorUrl.padEnd(24)} x402 facilitator API for the devnet (/supported, /verify, /settle)`,
);
out(`  ${"traces".padEnd(width)}  http://127.0.0.1:${port("JAEGER_UI_PORT", 16686)}`);
out(
  `  ${"metrics".padEnd(width)}  http://127.0.0.1:${port("PROMETHEUS_PORT", 9090)} (Prometheus: series, alerts)`,
);
out(`  ${"postgres".padEnd(width)}  ${databaseUrl}`);
out(`  ${"nats".padEnd(width)}  ${natsUrl}`);
out("");
out(`Stack file for make demo: ${path.relative(REPO_ROOT, STACK_FILE)}`);
out("Try: make demo · make compose-down stops it.");
