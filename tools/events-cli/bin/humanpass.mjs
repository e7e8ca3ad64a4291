#!/usr/bin/env node
// The compiled CLI (`make build` writes dist/).
const { main } = await import("../dist/main.js");
process.exitCode = await main(process.argv.slice(2));
