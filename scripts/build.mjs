// `make build`: `tsc -b` over tsconfig.build.json (or the projects named as arguments), then each service built gets
// its bundle (scripts/bundle.mjs). The sources name the files they import (`./app.ts`); tsc emits `./app.js` in the
// JavaScript (rewriteRelativeImportExtensions), so dist/ runs as emitted.
import path from "node:path";
import ts from "typescript";
import { bundleService, SERVICES } from "./bundle.mjs";

const EMITTED = { ".ts": ".js", ".mts": ".mjs", ".cts": ".cjs" };

/**
 * The declarations tsc emits keep `./app.ts` (microsoft/TypeScript#61037: TypeScript reads them, other tools an
 * integrator runs on our .d.ts may not); the published packages' declarations name the `.js` beside them instead.
 */
function declarationSpecifiers(context) {
  const { factory } = context;
  const rewrite = (literal) => {
    const match = /^(\.\.?\/.*?)(?<!\.d)(\.[mc]?ts)$/.exec(literal.text);
    return match ? factory.createStringLiteral(match[1] + EMITTED[match[2]]) : literal;
  };
  return (file) => {
    const visit = (node) => {
      if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier))
        return factory.updateImportDeclaration(
          node,
          node.modifiers,
          node.importClause,
          rewrite(node.moduleSpecifier),
          node.attributes,
        );
      if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier))
        return factory.updateExportDeclaration(
          node,
          node.modifiers,
          node.isTypeOnly,
          node.exportClause,
          rewrite(node.moduleSpecifier),
          node.attributes,
        );
      if (
        ts.isImportTypeNode(node) &&
        ts.isLiteralTypeNode(node.argument) &&
        ts.isStringLiteral(node.argument.literal)
      )
        return factory.updateImportTypeNode(
          node,
          factory.updateLiteralTypeNode(node.argument, rewrite(node.argument.literal)),
          node.attributes,
          node.qualifier,
          node.typeArguments,
          node.isTypeOf,
        );
      return ts.visitEachChild(node, visit, context);
    };
    return ts.visitNode(file, visit);
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
  afterDeclarations: [declarationSpecifiers],
}));
if (status !== ts.ExitStatus.Success) process.exit(1);
const named = projects.map((p) => /^services\/([^/]+)\//.exec(path.normalize(p))?.[1]).filter(Boolean);
for (const service of projects.length > 0 ? named : SERVICES) await bundleService(service);
