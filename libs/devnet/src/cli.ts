import { readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { connectDevnet, type DevnetInfo, devnetInfo, startDevnet } from "./devnet.ts";
import { seedDemo, seedToJson } from "./seed.ts";

const USAGE = `usage:
  cli start [--port 8545] [--seed] [--out devnet.json]   start a devnet and keep it running until SIGINT/SIGTERM
  cli seed --devnet devnet.json                           seed the demo data into a running devnet
`;

function output(value: unknown, file: string | undefined): void {
  const text = `${JSON.stringify(value, null, 2)}\n`;
  if (file) writeFileSync(file, text);
  else process.stdout.write(text);
}

async function start(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      port: { type: "string", default: "0" },
      seed: { type: "boolean", default: false },
      out: { type: "string" },
    },
  });
  const devnet = await startDevnet({ port: Number(values.port) });
  const seed = values.seed ? seedToJson(await seedDemo(devnet)) : undefined;
  output({ ...devnetInfo(devnet), ...(seed ? { seed } : {}) }, values.out);
  process.stderr.write(`devnet listening at ${devnet.rpcUrl} (chain id ${devnet.chainId})\n`);
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  await devnet.stop();
}

async function seed(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { devnet: { type: "string" }, out: { type: "string" } } });
  if (!values.devnet) throw new Error("--devnet <file written by `start --out`> is required");
  const info = JSON.parse(readFileSync(values.devnet, "utf8")) as DevnetInfo;
  output(seedToJson(await seedDemo(connectDevnet(info))), values.out);
}

const [command, ...rest] = process.argv.slice(2);
const commands: Record<string, (args: string[]) => Promise<void>> = { start, seed };
const run = command ? commands[command] : undefined;
if (!run) {
  process.stderr.write(USAGE);
  process.exit(2);
}
run(rest).catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
