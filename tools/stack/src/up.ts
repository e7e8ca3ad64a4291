// make up: the whole stack on this machine with demo data, until Ctrl-C (or make down).
import path from "node:path";
import { OPERATOR_USER, parseSubscriberGrants, subscriberUser } from "@humanpass/event-bus";
import { didFromAddress } from "@humanpass/identity";
import { REPO_ROOT } from "@humanpass/testing/service-process";
import { type LocalNats, startLocalNats } from "./local-nats.ts";
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
// A NATS of its own with the committed users, as production has them; another one (the machine's, without users)
// only when asked for.
let nats: LocalNats | undefined;
if (!process.env.HUMANPASS_NATS_URL) {
  const port = Number(process.env.HUMANPASS_NATS_PORT || 14222);
  out(`humanpass: starting NATS on 127.0.0.1:${port} with the committed users (store in .run/nats-up)`);
  nats = await startLocalNats({
    port,
    storeDir: path.join(REPO_ROOT, ".run/nats-up"),
    subscribers: parseSubscriberGrants(process.env.NATS_SUBSCRIBERS),
  });
}
const natsUrl = nats?.url ?? process.env.HUMANPASS_NATS_URL!;

out("humanpass: starting the devnet, the six services and demo data …");
const stack = await startStack({
  databaseUrl,
  natsUrl,
  ...(nats ? { natsPasswords: nats.passwordOf, natsSubscribers: nats.subscribers } : {}),
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
}).catch(async (e) => {
  await nats?.stop();
  throw e;
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
  ...(nats
    ? { natsUser: { user: OPERATOR_USER, pass: nats.passwordOf(OPERATOR_USER) }, natsPid: nats.pid }
    : {}),
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
  `  ${"nats".padEnd(width)}  ${natsUrl.padEnd(24)} ${nats ? `users of ${path.relative(REPO_ROOT, nats.config)}, passwords dev-<user> (${nats.subscribers.map((g) => subscriberUser(g.name)).join(", ")} included)` : "no users"}`,
);
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
out(
  nats
    ? `  NATS_URL=${natsUrl} NATS_USER=operator NATS_PASSWORD=${nats.passwordOf(OPERATOR_USER)} npx humanpass events tail   every event as it happens`
    : `  NATS_URL=${natsUrl} npx humanpass events tail   every event as it happens`,
);
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
  await nats?.stop();
  removeStackFile();
  out("humanpass: stopped");
  process.exit(0);
};
process.on("SIGINT", () => void shutdown());
process.on("SIGTERM", () => void shutdown());
