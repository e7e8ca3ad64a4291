// Fills Node's compile cache (the directory NODE_COMPILE_CACHE names) with what a service compiles as it starts, for
// the image to carry: `node fill-compile-cache.mjs dist/service.js [dist/<name>-worker.js …]`, run in the service's
// folder as the user the service runs as (Node keeps one cache per uid). The service's bundle is started with a
// LOG_LEVEL no service accepts, so it compiles everything it imports and then stops at the configuration check,
// before it connects to anything (some services need no other variable); each worker thread's bundle is started as
// a thread with no settings, which it imports its modules before failing on.
import { spawnSync } from "node:child_process";
import { flushCompileCache } from "node:module";
import path from "node:path";
import { Worker } from "node:worker_threads";

const [service, ...workers] = process.argv.slice(2);
if (!process.env.NODE_COMPILE_CACHE || !service) {
  process.stderr.write(
    "usage: NODE_COMPILE_CACHE=<dir> node fill-compile-cache.mjs <service.js> [worker.js …]\n",
  );
  process.exit(64);
}
const env = { PATH: process.env.PATH, NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE };
const started = spawnSync(process.execPath, ["--enable-source-maps", service], {
  env: { ...env, LOG_LEVEL: "fill-compile-cache" },
  stdio: "ignore",
});
// 78: the configuration check refused the LOG_LEVEL, after every module was loaded.
if (started.status !== 78) {
  process.stderr.write(
    `${service} exited ${started.status ?? started.signal}, not at the configuration check\n`,
  );
  process.exit(1);
}
for (const worker of workers) {
  await new Promise((resolve) => {
    const thread = new Worker(path.resolve(worker), { env, stdout: true, stderr: true });
    thread.once("error", resolve);
    thread.once("exit", resolve);
  });
}
flushCompileCache();
