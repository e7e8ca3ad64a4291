// The second step of `make build`, after `tsc -b` (scripts/build.mjs calls it): each service's process as one esbuild
// bundle, dist/service.js (and, for the verifier, its worker thread as dist/verification-worker.js), which the
// images, compose, Kubernetes and `make up` run. Node spends most of a service's start-up resolving and loading
// about two thousand files of node_modules one by one; one file per process starts in well under half of that
// (docs/performance-decisions.md; why two tools: docs/architecture.md).
//
// The bundles sit at the depth of src/main.ts, so the paths the sources build from `import.meta.url` (../contexts,
// ../config, ./verification-worker.js) hold as they are.
import { cpSync, existsSync, readFileSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { decode, encode } from "@jridgewell/sourcemap-codec";
import * as esbuild from "esbuild";

export const SERVICES = [
  "chain-indexer",
  "attestations-api",
  "verifier",
  "agent-auth",
  "payment-gateway",
  "webhooks",
];

/**
 * Packages that stay real modules in node_modules, imported from the bundle at run time:
 * - pg, pino: OpenTelemetry instruments them by hooking `require`, which a bundled copy never goes through;
 * - pino also starts its transports (pino-pretty) as worker threads from files beside its own;
 * - @fastify/swagger-ui serves the files of its own folder, @fastify/swagger reads its own package.json;
 * - mcl-wasm: the verifier reaches its live CommonJS exports through `createRequire` too, which must be the one
 *   instance that `mcl.init()` set up, not a second, bundled copy;
 * and any package with a native addon (it finds its `.node` file from its own folder). The build fails on a bundled
 * module that uses `__dirname` or `__filename` (undefined in the bundle, an ES module), and on a package that is
 * bundled and also loaded through `createRequire`: either belongs here.
 */
const EXTERNAL = new Set([
  "pg",
  "pino",
  "@fastify/swagger",
  "@fastify/swagger-ui",
  "mcl-wasm",
  // In the verifier's iden3 libraries: web-worker starts its own file as a thread; ky-universal (imported only
  // when jsonld fetches over HTTP, which the verifier's document loader does itself) awaits at its top level.
  "web-worker",
  "ky-universal",
]);

/**
 * Uses of `__dirname`/`__filename` read and found harmless, by module. In the CommonJS bundle they name the bundle's
 * folder instead of the module's, so every other use fails the build like in the ES module bundles.
 */
const REVIEWED_MODULE_PATHS = new Map([
  ["node_modules/ejs/lib/ejs.js", "`__filename` is text of a template's generated source"],
  [
    "node_modules/@iden3/js-iden3-auth/dist/node/cjs/auth/auth.js",
    "the default circuits folder of a verifier built without a suite; the verifier passes its own",
  ],
]);

/** Extra entries besides the service's process: worker threads, named as the sources load them. */
/** The Node the bundles run on: the line of .node-version, which the images and `make` use. */
const NODE_TARGET = `node${readFileSync(new URL("../.node-version", import.meta.url), "utf8").trim()}`;

const WORKERS = { verifier: { "verification-worker": "src/verification/verification-worker.ts" } };
/** Files the bundles load by path, copied beside them. */
const BESIDE = { verifier: ["src/verification/web-worker-noop.cjs"] };

/**
 * CommonJS libraries a service's sources load through `createRequire`, prebundled into one CommonJS file beside
 * its bundles, which the sources load instead when it is there: the verifier's iden3 libraries, about 1,200 files
 * that its worker thread loads before the pool is ready (src/verification/iden3-modules.ts). Resolved here as
 * iden3-modules.ts resolves them, so each export is the very instance @iden3/js-iden3-auth itself requires.
 */
const PREBUNDLED = {
  verifier: {
    file: "iden3.cjs",
    modules(dir) {
      const fromHere = createRequire(path.resolve(dir, "src/verification/iden3-modules.ts"));
      const iden3Auth = fromHere.resolve("@iden3/js-iden3-auth");
      const jsSdk = createRequire(iden3Auth).resolve("@0xpolygonid/js-sdk");
      const fromSdk = createRequire(jsSdk);
      return {
        iden3Auth,
        jsSdk,
        jsJwz: fromSdk.resolve("@iden3/js-jwz"),
        jsCrypto: fromSdk.resolve("@iden3/js-crypto"),
        jsIden3Core: fromSdk.resolve("@iden3/js-iden3-core"),
      };
    },
  },
};

const packageName = (specifier) =>
  specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : specifier.split("/")[0];

/** The package.json of the copy of `name` that Node finds from `dir` (node_modules folders upwards). */
function manifestOf(name, dir) {
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    const candidate = path.join(d, "node_modules", name, "package.json");
    if (existsSync(candidate)) return realpathSync(candidate);
    if (path.dirname(d) === d) return undefined;
  }
}

const hasNativeAddon = (manifestPath) => {
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
  const deps = { ...manifest.dependencies, ...manifest.optionalDependencies };
  return Boolean(manifest.gypfile || deps["node-gyp-build"] || deps.bindings || deps["prebuild-install"]);
};

/**
 * Keeps the EXTERNAL packages and those with native addons out of the bundle, and checks that each resolves from
 * the bundle's folder to the very copy the importing package would get (a nested node_modules copy would not).
 */
function externals(outdir) {
  return {
    name: "humanpass-externals",
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, (args) => {
        if (args.path.startsWith("node:") || args.path.startsWith("@humanpass/")) return undefined;
        const name = packageName(args.path);
        const manifest = manifestOf(name, args.resolveDir);
        if (!manifest || (!EXTERNAL.has(name) && !hasNativeAddon(manifest))) return undefined;
        const seen = manifestOf(name, outdir);
        if (seen !== manifest) {
          const text = `${name} stays external, but ${outdir} would load ${seen ?? "nothing"}, not ${manifest}`;
          return { errors: [{ text }] };
        }
        return { path: args.path, external: true };
      });
    },
  };
}

/**
 * The source map, narrowed to our own sources: stack traces name the `.ts` lines of the workspace. A map of every
 * bundled node_modules line is megabytes that `--enable-source-maps` reads and decodes at every start (a quarter
 * of a second); their frames name the bundle's line instead. Node maps a position to the nearest mapping before
 * it, so an unmapped segment ends each run of our lines.
 */
function narrowSourceMap(mapFile) {
  const map = JSON.parse(readFileSync(mapFile, "utf8"));
  const ours = map.sources.map((source) => !source.split(/[\\/]/).includes("node_modules"));
  const index = new Map();
  const sources = [];
  map.sources.forEach((source, i) => {
    if (ours[i]) {
      index.set(i, sources.length);
      sources.push(source);
    }
  });
  let mapped = false;
  const lines = decode(map.mappings).map((line) => {
    const kept = [];
    for (const segment of line) {
      if (segment.length > 1 && ours[segment[1]]) {
        kept.push([segment[0], index.get(segment[1]), ...segment.slice(2)]);
        mapped = true;
      } else if (mapped) {
        kept.push([segment[0]]);
        mapped = false;
      }
    }
    return kept;
  });
  writeFileSync(
    mapFile,
    JSON.stringify({ ...map, sources, sourcesContent: undefined, mappings: encode(lines) }),
  );
}

/**
 * Fails on a bundled module that finds files from its own folder (esbuild marks each module with its path), and on
 * a package loaded at run time through `createRequire` while a copy of it is bundled.
 */
function checkBundle(bundleFile, inputs) {
  let module = "";
  for (const line of readFileSync(bundleFile, "utf8").split("\n")) {
    module = /^\/\/ (\S+)$/.exec(line)?.[1] ?? module;
    if (/\b__(dirname|filename)\b/.test(line) && !REVIEWED_MODULE_PATHS.has(module)) {
      throw new Error(`${bundleFile}: ${module} uses __dirname or __filename; add its package to EXTERNAL`);
    }
    const required = /\bcreateRequire\w*\(import\.meta\.url\)\("([^"]+)"\)/.exec(line)?.[1];
    const name = required && packageName(required);
    if (name && inputs.some((input) => input.includes(`node_modules/${name}/`))) {
      throw new Error(
        `${bundleFile}: ${name} is bundled and also loaded through createRequire; add it to EXTERNAL`,
      );
    }
  }
}

/** Whether every input of the previous bundle is older than it (inputs as its metafile lists them). */
function upToDate(outdir) {
  const metaFile = path.join(outdir, "bundle-meta.json");
  if (!existsSync(metaFile)) return false;
  const { inputs, outputs } = JSON.parse(readFileSync(metaFile, "utf8"));
  if (!outputs.every((o) => existsSync(o))) return false;
  const built = Math.min(...outputs.map((o) => statSync(o).mtimeMs));
  return inputs.every((i) => existsSync(i) && statSync(i).mtimeMs < built);
}

/** One CommonJS file exporting the PREBUNDLED modules of a service by name (no source map: none of it is ours). */
function prebundle(dir, outdir, { file, modules }) {
  const requires = Object.entries(modules(dir)).map(
    ([name, entry]) => `${name}: require(${JSON.stringify(entry)})`,
  );
  return esbuild.build({
    stdin: { contents: `module.exports = { ${requires.join(", ")} };`, resolveDir: dir, loader: "js" },
    outfile: path.join(outdir, file),
    bundle: true,
    platform: "node",
    format: "cjs",
    target: NODE_TARGET,
    plugins: [externals(path.resolve(outdir))],
    metafile: true,
    logLevel: "warning",
  });
}

/** Bundles one service into its dist/, unless no input changed since its last bundle. */
export async function bundleService(service) {
  const dir = path.join("services", service);
  const outdir = path.join(dir, "dist");
  if (upToDate(outdir)) return;
  const result = await esbuild.build({
    entryPoints: { service: path.join(dir, "src/main.ts"), ...prefixed(dir, WORKERS[service]) },
    outdir,
    bundle: true,
    platform: "node",
    format: "esm",
    target: NODE_TARGET,
    // The workspace packages from their sources, as the tests and `node --conditions=@humanpass/source` see them.
    conditions: ["@humanpass/source"],
    sourcemap: "linked",
    sourcesContent: false,
    // Bundled CommonJS packages `require` Node's built-ins.
    banner: {
      js: 'import { createRequire as __bundleRequire } from "node:module";\nconst require = __bundleRequire(import.meta.url);',
    },
    plugins: [externals(path.resolve(outdir))],
    metafile: true,
    logLevel: "warning",
  });
  const results = [
    result,
    ...(PREBUNDLED[service] ? [await prebundle(dir, outdir, PREBUNDLED[service])] : []),
  ];
  for (const { metafile } of results) {
    for (const output of Object.keys(metafile.outputs)) {
      if (output.endsWith(".map")) narrowSourceMap(output);
      else checkBundle(output, Object.keys(metafile.inputs));
    }
  }
  for (const file of BESIDE[service] ?? [])
    cpSync(path.join(dir, file), path.join(outdir, path.basename(file)));
  // This script is an input too: a change to what stays external rebundles.
  const inputs = [
    ...results.flatMap(({ metafile }) => Object.keys(metafile.inputs)),
    ...(BESIDE[service] ?? []).map((file) => path.join(dir, file)),
    path.relative(process.cwd(), fileURLToPath(import.meta.url)),
  ];
  writeFileSync(
    path.join(outdir, "bundle-meta.json"),
    JSON.stringify({ inputs, outputs: results.flatMap(({ metafile }) => Object.keys(metafile.outputs)) }),
  );
}

const prefixed = (dir, entries = {}) =>
  Object.fromEntries(Object.entries(entries).map(([name, file]) => [name, path.join(dir, file)]));
