// Hardhat 2 configuration of the humanpass devnet node, started by src/devnet.ts as
// `hardhat --config hardhat.config.cjs node --hostname 127.0.0.1 --port 0`.
const os = require("node:os");
const path = require("node:path");

// The node must not outlive the process that started it, even if that one is killed without cleanup.
const parentPid = Number(process.env.HUMANPASS_DEVNET_PARENT_PID || 0);
if (parentPid > 0) {
  setInterval(() => {
    try {
      process.kill(parentPid, 0);
    } catch {
      process.exit(0);
    }
  }, 1000).unref();
}

// A normal exit on SIGTERM (instead of the default kill) lets Node run its exit hooks.
process.once("SIGTERM", () => process.exit(0));

const scratch = path.join(os.tmpdir(), "humanpass-devnet-hardhat");

/** @type {import("hardhat/types").HardhatUserConfig} */
module.exports = {
  networks: {
    hardhat: {
      chainId: 45056,
      // Prague, not Osaka: Osaka caps a transaction at 2^24 gas, too little for the batch entry points.
      hardfork: "prague",
      blockGasLimit: 1_000_000_000,
      initialBaseFeePerGas: 0,
      loggingEnabled: false,
      // Explicit keys from the parent: deriving accounts from a mnemonic costs this process a second at start.
      accounts: (process.env.HUMANPASS_DEVNET_KEYS || "")
        .split(",")
        .filter(Boolean)
        .map((privateKey) => ({
          privateKey,
          balance: "10000000000000000000000",
        })),
    },
  },
  // Hardhat's own build output goes to a scratch folder: our artifacts are built by src/build-contracts.ts.
  paths: {
    root: __dirname,
    sources: path.join(__dirname, "contracts"),
    artifacts: path.join(scratch, "artifacts"),
    cache: path.join(scratch, "cache"),
  },
};
