// make up: the whole stack on this machine with demo data, until Ctrl-C (or make down).
import { didFromAddress } from "@humanpass/identity";
import { DEV_WEBHOOKS_ADMIN_TOKEN, SERVICE_NAMES, startStack } from "./stack.ts";
import { readStackFile, removeStackFile, writeStackFile } from "./stack-file.ts";

const COLORS = [36, 35, 33, 32, 34, 91];
const width = Math.max(...SERVICE_NAMES.map((n) => n.length));
const out = (line: string) => process.stdout.write(`${line}\n`);

const existing = readStackFile();
if (existing) {
  try {
    process.kill(existing.pid, 0);
    out(`The stack is already running (pid ${existing.pid}). Stop it with: make down`);
    process.exit(1);
  } catch {
    removeStackFile();
  }
}

const base = new URL(process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres");
base.pathname = "/humanpass";
const databaseUrl = process.env.HUMANPASS_DATABASE_URL ?? base.toString();
const natsUrl = process.env.NATS_URL ?? "nats://127.0.0.1:4222";

out("humanpass: starting the devnet, the six services and demo data …");
const stack = await startStack({
  databaseUrl,
  natsUrl,
  // The machine's NATS at :4222 has no users; a NATS loading users.conf needs the topology user's password here.
  ...(process.env.NATS_TOPOLOGY_PASSWORD
    ? { natsTopologyUser: { user: "topology", pass: process.env.NATS_TOPOLOGY_PASSWORD } }
    : {}),
  ports: "default",
  devnetPort: Number(process.env.DEVNET_PORT ?? 8545),
  // The indexer serves a block once another follows it: without these, an attestation written last would wait.
  blockIntervalSeconds: Number(process.env.DEVNET_BLOCK_INTERVAL_SECONDS ?? 2),
  facilitatorHost: process.env.HOST,
  logLevel: process.env.LOG_LEVEL ?? "info",
  otlpEndpoint: process.env.OTEL_EXPORTER_OTLP_ENDPOINT,
  // Loopback only, unless HOST says otherwise (e.g. HOST=0.0.0.0 to reach the stack from another device).
  env: Object.fromEntries(
    SERVICE_NAMES.map((n) => [
      n,
      { LOG_PRETTY: "true", ...(process.env.HOST ? { HOST: process.env.HOST } : {}) },
    ]),
  ),
  log: (service, line) => {
    const color = COLORS[SERVICE_NAMES.indexOf(service as never) % COLORS.length];
    out(`\x1b[${color}m${service.padEnd(width)} |\x1b[0m ${line}`);
  },
});

const agent = (i: number) => {
  const account = stack.devnet.accounts[i]!;
  return { address: account.address, did: didFromAddress(account.address), privateKey: account.privateKey };
};
writeStackFile({
  pid: process.pid,
  servicePids: Object.fromEntries(SERVICE_NAMES.map((n) => [n, stack.processes[n].child.pid!])) as never,
  devnetRpcUrl: stack.devnet.rpcUrl,
  chainId: stack.devnet.chainId,
  usdc: stack.devnet.addresses.usdc,
  facilitatorUrl: stack.facilitator.url,
  prefix: stack.prefix,
  natsUrl,
  urls: stack.urls,
  ownershipSchema: stack.seed.schemas.agentOwnership,
  pairedAgents: [4, 5, 6, 7].map(agent),
  unpairedAgent: agent(10),
});

const docs = (n: (typeof SERVICE_NAMES)[number]) => `${stack.urls[n]}/docs`;
out("");
out("humanpass is up.");
out("");
for (const name of SERVICE_NAMES)
  out(`  ${name.padEnd(width)}  ${stack.urls[name].padEnd(24)} docs: ${docs(name)}`);
out(`  ${"devnet".padEnd(width)}  ${stack.devnet.rpcUrl} (chain id ${stack.devnet.chainId})`);
out(
  `  ${"facilitator".padEnd(width)}  ${stack.facilitator.url.padEnd(24)} x402 facilitator API for the devnet (/supported, /verify, /settle)`,
);
out("");
out(
  `Demo data: ${stack.seed.humans.length} verified humans, ${stack.seed.pairings.length} agents paired on chain, schemas`,
);
out(`  AgentOwnership ${stack.seed.schemas.agentOwnership}`);
out(`  Review         ${stack.seed.schemas.review}`);
out("");
out("Try:");
out(
  "  make demo                                   an agent claims, then pays the discounted tier until max_use_exceeded",
);
out("  npx humanpass events tail                   every event as it happens");
out(
  `  webhooks admin API (docs/events.md#webhooks): Authorization: Bearer ${DEV_WEBHOOKS_ADMIN_TOKEN} (development only)`,
);
out(`  curl '${stack.urls["attestations-api"]}/api/v1/schemas'`);
out(`  curl '${stack.urls["verifier"]}/api/verification-request'`);
out(
  `  open ${stack.urls["verifier"]}/ (verifier demo page), ${stack.urls["payment-gateway"]}/api/v1/weather in a browser (paywall)`,
);
out("");
out("Ctrl-C or `make down` stops everything this started.");

let stopping = false;
const shutdown = async () => {
  if (stopping) return;
  stopping = true;
  out("humanpass: stopping …");
  await stack.stop();
  removeStackFile();
  out("humanpass: stopped");
  process.exit(0);
};
process.on("SIGINT", () => void shutdown());
process.on("SIGTERM", () => void shutdown());
