// `make lint`: packages reach each other only through their package name and public entry point (its package.json
// "exports"), never by a relative path into another package's files. A package's own tests import its src freely.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-reach-into-another-package",
      comment:
        "Import the package by name (@humanpass/…) and export what you need from its src/index.ts; shared test helpers belong in libs/testing.",
      severity: "error",
      from: { path: "^(libs|services|tools)/([^/]+)/" },
      to: {
        path: "^(libs|services|tools|deploy|bench)/",
        pathNot: "^$1/$2/",
        dependencyTypes: ["local"],
        dependencyTypesNot: ["aliased-workspace"],
      },
    },
    {
      name: "no-reach-into-a-package-from-outside",
      comment:
        "bench/, deploy/ and scripts/ use services and libs by package name and public entry point only.",
      severity: "error",
      from: { path: "^(bench|deploy|scripts)/" },
      to: {
        path: "^(libs|services|tools)/",
        dependencyTypes: ["local"],
        dependencyTypesNot: ["aliased-workspace"],
      },
    },
    {
      name: "no-circular",
      comment: "Shared types go to a module both sides import (as attestations-api's db/types.ts does).",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "migrations-are-frozen",
      comment: "A migration is a snapshot: it never imports another migration or what one exports.",
      severity: "error",
      from: { path: "/db/migrations/[^/]+$", pathNot: "/db/migrations/index\\.ts$" },
      to: { path: "/db/migrations/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)(node_modules|dist)/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["@humanpass/source", "import", "require", "node", "default"],
      extensions: [".ts", ".mts", ".js", ".mjs", ".cjs", ".json"],
    },
  },
};
