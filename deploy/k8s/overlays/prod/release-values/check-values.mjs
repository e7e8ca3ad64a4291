/**
 * The prod migration Job's first step: refuses the release while a value of the deployment's values.env (the
 * humanpass-release-values ConfigMap, given to this container as VALUE_<key>) is still one of values.env.example's
 * placeholders (as @humanpass/config's placeholderIn tells them), naming each. Nothing is migrated
 * and the Job fails, so the release stops before a service starts on it (each would refuse the same values too).
 * Plain JavaScript, run by plain `node` in a service image, like run.mjs.
 */
import { placeholderIn } from "@humanpass/config";

const PREFIX = "VALUE_";
const values = Object.entries(process.env).filter(([key]) => key.startsWith(PREFIX));
if (values.length === 0) {
  process.stderr.write("values.env: no value reached this step (envFrom with prefix VALUE_)\n");
  process.exit(78);
}
const problems = values.flatMap(([key, value]) => {
  const reason = placeholderIn(value ?? "");
  return reason ? [`  ${key.slice(PREFIX.length)}: ${reason}: ${value}`] : [];
});
if (problems.length > 0) {
  process.stderr.write(`values.env still holds placeholders, nothing is migrated:\n${problems.join("\n")}\n`);
  process.exit(78);
}
process.stdout.write(`values.env: ${values.length} values, no placeholder\n`);
