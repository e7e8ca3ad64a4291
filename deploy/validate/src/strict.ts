import path from "node:path";
import ts from "typescript";
import type { Problem } from "./problems.ts";

/**
 * Strict mode, like kubeconform's: a field the Kubernetes API does not define is an error, not silently dropped
 * by the API server. The JSON schemas in kubernetes-models allow unknown fields, but its TypeScript interfaces
 * list every field, and TypeScript's excess-property check on an object literal finds the unknown ones. So each
 * manifest becomes `const m: IDeployment = { …the manifest… }` in a program checked in memory.
 */
export function strictProblems(
  manifests: { manifest: unknown; label: string; module: string; kind: string }[],
): Problem[] {
  if (manifests.length === 0) return [];
  const fileName = path.join(path.dirname(new URL(import.meta.url).pathname), "__strict_manifests__.ts");
  let source = "";
  const owners: { label: string; from: number }[] = [];
  manifests.forEach(({ manifest, label, module, kind }, i) => {
    owners.push({ label, from: source.length });
    source += `import type { I${kind} as T${i} } from ${JSON.stringify(module)};\n`;
    source += `export const m${i}: T${i} = ${JSON.stringify(manifest, null, 1)};\n`;
  });
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    // Our own models (object-store.ts) are imported by their file name.
    allowImportingTsExtensions: true,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, version, ...rest) =>
    name === fileName
      ? ts.createSourceFile(name, source, version, true)
      : getSourceFile(name, version, ...rest);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => name === fileName || fileExists(name);
  const program = ts.createProgram([fileName], options, host);
  const file = program.getSourceFile(fileName)!;
  const problems: Problem[] = [];
  for (const d of ts.getPreEmitDiagnostics(program, file)) {
    const message = ts.flattenDiagnosticMessageText(d.messageText, " ");
    if (d.file?.fileName !== fileName || d.start === undefined) {
      problems.push({ where: "strict check", path: "/", message });
      continue;
    }
    const start = d.start;
    const owner = [...owners].reverse().find((o) => o.from <= start) ?? owners[0]!;
    problems.push({
      where: owner.label,
      path: pointerAt(d.file, d.start),
      message: `unknown or mistyped field: ${message}`,
    });
  }
  return problems;
}

/** The JSON path of the property a diagnostic points at, read from the enclosing object literals. */
function pointerAt(file: ts.SourceFile, position: number): string {
  const parts: string[] = [];
  let node: ts.Node | undefined = findNode(file, position);
  while (node && !ts.isVariableDeclaration(node)) {
    if (ts.isPropertyAssignment(node))
      parts.unshift(ts.isStringLiteral(node.name) ? node.name.text : node.name.getText(file));
    else if (ts.isArrayLiteralExpression(node.parent ?? node) && node.parent) {
      parts.unshift(
        String((node.parent as ts.ArrayLiteralExpression).elements.indexOf(node as ts.Expression)),
      );
    }
    node = node.parent;
  }
  return `/${parts.join("/")}`;
}

function findNode(node: ts.Node, position: number): ts.Node | undefined {
  if (position < node.getStart() || position >= node.getEnd()) return undefined;
  for (const child of node.getChildren()) {
    const found = findNode(child, position);
    if (found) return found;
  }
  return node;
}
