#!/usr/bin/env node
// The compiled CLI (`make build` writes dist/).
let main;
try {
  ({ main } = await import("../dist/main.js"));
} catch (error) {
  if (error?.code !== "ERR_MODULE_NOT_FOUND" || !String(error.message).includes("dist/main.js")) throw error;
  process.stderr.write("humanpass: the CLI is not compiled yet: run `make build` in the repository first\n");
  process.exit(69);
}
process.exitCode = await main(process.argv.slice(2));
