#!/usr/bin/env node
// The CLI is TypeScript like the rest of the repo; tsx compiles it on the fly so it runs from a plain checkout.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../src/main.ts");
process.exitCode = await main(process.argv.slice(2));
