// Prints vitest's totals as one plain closing line: "tests: N passed, N failed".
import { readFileSync } from "node:fs";

try {
  const r = JSON.parse(readFileSync(process.argv[2], "utf8"));
  const skipped = r.numPendingTests + r.numTodoTests;
  console.log(
    `tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed${skipped ? `, ${skipped} skipped` : ""}`,
  );
} catch (e) {
  console.log(`tests: no summary (${e.message})`);
}
