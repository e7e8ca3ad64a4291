import { writeFileSync } from "node:fs";
import path from "node:path";
import { prometheusRule, RULE_FILES, rulesWithFor } from "./observability.ts";

/**
 * `npm run -s observability -w @humanpass/deploy-validate -- prometheus-rule`: writes the prod overlay's
 * PrometheusRules from deploy/observability/alerts.yml and postgres-alerts.yml.
 * `… -- rules-with-for <file> <duration>`: writes the alert rules with every `for:` set to <duration> (the compose
 * test's copy).
 */
const [command, file, duration] = process.argv.slice(2);
if (command === "prometheus-rule") {
  for (const ruleFile of RULE_FILES) writeFileSync(ruleFile.prometheusRule, prometheusRule(ruleFile));
} else if (command === "rules-with-for" && file && duration) {
  writeFileSync(path.resolve(process.env.INIT_CWD ?? process.cwd(), file), rulesWithFor(duration));
} else {
  process.stderr.write("usage: observability prometheus-rule | rules-with-for <file> <duration>\n");
  process.exitCode = 2;
}
