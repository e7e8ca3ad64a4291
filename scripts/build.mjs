// `make build`: `tsc -b` over tsconfig.build.json (or the projects named as arguments) through the TypeScript API,
// so one transformer can complete the relative specifiers as emitted; then each service built gets its bundle
// (scripts/bundle.mjs). The sources import `./app` (moduleResolution Bundler); Node's ESM loader, and integrators'
// `moduleResolution: node16`, need `./app.js` or `./db/index.js`. The transformer rewrites those in the emitted
// JavaScript and declarations only; the sources, the incremental build info and the project graph are tsc's own.
import { existsSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { bundleService, SERVICES } from "./bundle.mjs";

const EMITTED_EXTENSION = { ".ts": ".js", ".mts": ".mjs", ".cts": ".cjs" };

/** `./app` → `./app.js`, `./db` → `./db/index.js`; anything else (packages, `./x.js`, `./x.json`) unchanged. */
function completeSpecifier(specifier, fromFile) {
  if (!specifier.startsWith("./") && !specifier.startsWith("../")) return specifier;
  if (/\.(m|c)?js$|\.json$/.test(specifier)) return specifier;
  const base = path.resolve(path.dirname(fromFile), specifier);
  for (const [source, emitted] of Object.entries(EMITTED_EXTENSION)) {
    if (existsSync(base + source)) return specifier + emitted;
  }
  for (const [source, emitted] of Object.entries(EMITTED_EXTENSION)) {
    if (existsSync(path.join(base, `index${source}`))) return `${specifier}/index${emitted}`;
  }
  return specifier;
}

function completeSpecifiers(context) {
  const { factory } = context;
  return (sourceFile) => {
    const rewrite = (literal) => {
      const completed = completeSpecifier(literal.text, sourceFile.fileName);
      return completed === literal.text ? literal : factory.createStringLiteral(completed);
    };
    const visit = (node) => {
      if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
        return factory.updateImportDeclaration(
          node,
          node.modifiers,
          node.importClause,
          rewrite(node.moduleSpecifier),
          node.attributes,
        );
      }
      if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
        return factory.updateExportDeclaration(
          node,
          node.modifiers,
          node.isTypeOnly,
          node.exportClause,
          rewrite(node.moduleSpecifier),
          node.attributes,
        );
      }
      if (
        ts.isCallExpression(node) &&
        node.expression.kind === ts.SyntaxKind.ImportKeyword &&
        node.arguments.length > 0 &&
        ts.isStringLiteral(node.arguments[0])
      ) {
        return factory.updateCallExpression(node, node.expression, node.typeArguments, [
          rewrite(node.arguments[0]),
          ...node.arguments.slice(1),
        ]);
      }
      if (
        ts.isImportTypeNode(node) &&
        ts.isLiteralTypeNode(node.argument) &&
        ts.isStringLiteral(node.argument.literal)
      ) {
        return factory.updateImportTypeNode(
          node,
          factory.updateLiteralTypeNode(node.argument, rewrite(node.argument.literal)),
          node.attributes,
          node.qualifier,
          node.typeArguments,
          node.isTypeOf,
        );
      }
      return ts.visitEachChild(node, visit, context);
    };
    return ts.visitNode(sourceFile, visit);
  };
}

const formatHost = {
  getCanonicalFileName: (f) => f,
  getCurrentDirectory: ts.sys.getCurrentDirectory,
  getNewLine: () => ts.sys.newLine,
};
const report = (diagnostic) =>
  process.stderr.write(ts.formatDiagnosticsWithColorAndContext([diagnostic], formatHost));
const args = process.argv.slice(2);
const verbose = args.includes("--verbose");
// Projects named on the command line (e.g. services/verifier/tsconfig.build.json: that service and what it
// references, as the Dockerfile builds it), or all of them.
const projects = args.filter((a) => !a.startsWith("--"));
const host = ts.createSolutionBuilderHost(ts.sys, undefined, report, verbose ? report : () => {});
const builder = ts.createSolutionBuilder(host, projects.length > 0 ? projects : ["tsconfig.build.json"], {
  verbose,
});
const status = builder.build(undefined, undefined, undefined, () => ({
  // `after`: the import elision of type-only imports has run, so only the imports that stay are rewritten.
  after: [completeSpecifiers],
  afterDeclarations: [completeSpecifiers],
}));
if (status !== ts.ExitStatus.Success) process.exit(1);
const named = projects.map((p) => /^services\/([^/]+)\//.exec(path.normalize(p))?.[1]).filter(Boolean);
for (const service of projects.length > 0 ? named : SERVICES) await bundleService(service);
