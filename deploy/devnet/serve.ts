/**
 * The devnet as a container: the Hardhat node of @humanpass/devnet (chain id 45056, registries, test USDC and
 * Multicall3 deployed at fixed addresses), seeded with the demo data `make up` uses (AgentOwnership and Review
 * schemas, humans paired with agents), and the node's loopback RPC forwarded to 0.0.0.0:DEVNET_PORT so the other
 * containers reach it. Addresses, accounts and the seed go to stdout and to DEVNET_ADDRESSES_FILE when set.
 * DEVNET_BLOCK_INTERVAL_SECONDS (2; 0: blocks only for transactions): an empty block at that interval, as a live
 * chain grows, so the chain-indexer's confirmation depth is reached after the last transaction too.
 */
import { writeFileSync } from "node:fs";
import net from "node:net";
import { seedDemo, seedToJson, startDevnet } from "@humanpass/devnet";
import { composeDevnetEnv } from "./compose-env.ts";

const port = Number(process.env.DEVNET_PORT ?? 8545);
const blockIntervalSeconds = Number(process.env.DEVNET_BLOCK_INTERVAL_SECONDS ?? 2);
const log = (msg: string, fields: Record<string, unknown> = {}) =>
  process.stdout.write(
    `${JSON.stringify({ time: new Date().toISOString(), name: "devnet", msg, ...fields })}\n`,
  );

const devnet = await startDevnet({ port: 0, blockIntervalSeconds });
const seed = await seedDemo(devnet);
const upstream = new URL(devnet.rpcUrl);

// Hardhat 2 binds the loopback interface only; a plain TCP relay exposes it without patching the node.
const server = net.createServer((client) => {
  const node = net.connect({ host: "127.0.0.1", port: Number(upstream.port) });
  client.on("error", () => node.destroy());
  node.on("error", () => client.destroy());
  client.pipe(node);
  node.pipe(client);
});
await new Promise<void>((resolve) => server.listen(port, "0.0.0.0", resolve));

const summary = {
  rpcUrl: `http://0.0.0.0:${(server.address() as net.AddressInfo).port}`,
  chainId: devnet.chainId,
  ...devnet.addresses,
  seed: seedToJson(seed),
  serviceEnv: composeDevnetEnv(devnet, seed),
  deployer: devnet.accounts[0]!.address,
  // The deterministic development keys (public knowledge, devnet only), for the tools that act on this chain.
  accounts: devnet.accounts,
};
if (process.env.DEVNET_ADDRESSES_FILE)
  writeFileSync(process.env.DEVNET_ADDRESSES_FILE, `${JSON.stringify(summary, null, 2)}\n`);
log("devnet ready", summary);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, async () => {
    server.close();
    await devnet.stop();
    process.exit(0);
  });
}
