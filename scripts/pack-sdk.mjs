// `npm run pack:sdk [-- <directory>]`: one tarball per SDK package, as npm would publish it, in .run/sdk (or the
// directory given), emptied of older tarballs first. Each package builds itself on `npm pack` (its prepack script).
// Prints npm's JSON report (name, version, filename, files of each tarball) on stdout.
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, rmSync } from "node:fs";
import path from "node:path";

/** The packages integrators install (docs/sdk.md, docs/events.md), released together (.changeset/config.json). */
const SDK_PACKAGES = [
  "@humanpass/identity",
  "@humanpass/attestations-client",
  "@humanpass/human-proof",
  "@humanpass/x402-fastify",
  "@humanpass/events",
];

const root = path.dirname(path.dirname(new URL(import.meta.url).pathname));
const destination = path.resolve(root, process.argv[2] ?? ".run/sdk");
mkdirSync(destination, { recursive: true });
for (const file of readdirSync(destination)) if (file.endsWith(".tgz")) rmSync(path.join(destination, file));

// `npm run` hands its settings to child npm processes in npm_* variables (a workspace among them): not to this one.
const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)));
const report = execFileSync(
  "npm",
  ["pack", "--json", "--pack-destination", destination, ...SDK_PACKAGES.flatMap((name) => ["-w", name])],
  { cwd: root, env, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], maxBuffer: 64 * 1024 * 1024 },
);
process.stdout.write(report);
process.stderr.write(
  `${SDK_PACKAGES.length} SDK tarballs in ${path.relative(process.cwd(), destination) || "."}\n`,
);
