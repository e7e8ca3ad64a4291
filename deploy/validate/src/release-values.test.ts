// `kubectl apply -k` renders the prod overlay with whatever values.env holds; the migration Job, which a release
// runs first, refuses the release while a value is still one of values.env.example's placeholders.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { renderForLint } from "./deploy.ts";
import { parseManifests } from "./kustomize.ts";
import { REPO_ROOT, repoPath } from "./paths.ts";

type Obj = Record<string, any>;
const run = promisify(execFile);

/** A values.env as the Job's release-values step receives it: each KEY=value as VALUE_KEY. */
function asStepEnv(file: string): Record<string, string> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? "" };
  for (const line of readFileSync(repoPath(file), "utf8").split("\n")) {
    const entry = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line);
    if (entry) env[`VALUE_${entry[1]}`] = entry[2]!;
  }
  return env;
}

const checkValues = (env: Record<string, string>) =>
  run(
    process.execPath,
    ["--conditions=@humanpass/source", "deploy/k8s/overlays/prod/release-values/check-values.mjs"],
    { cwd: REPO_ROOT, env },
  ).then(
    ({ stdout }) => ({ code: 0, stdout, stderr: "" }),
    (e: { code: number; stdout: string; stderr: string }) => ({
      code: e.code,
      stdout: e.stdout,
      stderr: e.stderr,
    }),
  );

describe("the prod migration Job's release-values step", () => {
  it("runs first, on the release's values, in the verifier image", () => {
    const manifests = parseManifests(renderForLint("prod")) as Obj[];
    const job = manifests.find((m) => m.kind === "Job")!;
    const [first] = job.spec.template.spec.initContainers;
    expect(first.name).toBe("release-values");
    expect(first.image).toMatch(/\/humanpass\/verifier:.*@sha256:/);
    const source = first.envFrom[0];
    expect(source.prefix).toBe("VALUE_");
    const values = manifests.find(
      (m) => m.kind === "ConfigMap" && m.metadata.name === source.configMapRef.name,
    )!;
    expect(values.data.EVM_ADDRESS).toBe("0x70997970C51812dc3A010C7d01b50e0d17dc79C8");
  });

  it("refuses values.env.example as it is, naming each placeholder left", async () => {
    const { code, stderr } = await checkValues(asStepEnv("deploy/k8s/overlays/prod/values.env.example"));
    expect(code).toBe(78);
    expect(stderr).toContain("values.env still holds placeholders, nothing is migrated:");
    for (const line of [
      "  EVM_ADDRESS: the zero address is a placeholder: 0x0000000000000000000000000000000000000000",
      "  VERIFIER_HOST: a host under .example is a placeholder: verifier.humanpass.example",
      "  GATEWAY_CLASS: a placeholder is left: replace-with-the-gateway-class",
      "  BACKUP_DESTINATION: a placeholder is left: s3://replace-with-the-backup-bucket/postgres",
    ])
      expect(stderr).toContain(line);
    expect(stderr).not.toContain("RELEASE:");
  });

  it("refuses one placeholder left among filled values, and passes them all filled", async () => {
    const filled = asStepEnv("deploy/validate/fixtures/prod-values.env");
    const oneLeft = await checkValues({
      ...filled,
      VALUE_EVM_ADDRESS: "0x0000000000000000000000000000000000000000",
    });
    expect(oneLeft.code).toBe(78);
    expect(oneLeft.stderr.trim().split("\n")).toEqual([
      "values.env still holds placeholders, nothing is migrated:",
      "  EVM_ADDRESS: the zero address is a placeholder: 0x0000000000000000000000000000000000000000",
    ]);
    const passed = await checkValues(filled);
    expect(passed).toEqual({
      code: 0,
      stdout: expect.stringMatching(/^values\.env: \d+ values, no placeholder\n$/),
      stderr: "",
    });
  });
});
