// A NATS node stopping (a rollout, a drain) goes into lame-duck mode first: its clients are told to move and move
// over lame_duck_duration instead of all reconnecting at once, and the kubelet does not kill it before they have.
import { describe, expect, it } from "vitest";
import { renderForLint } from "./deploy.ts";
import { parseManifests } from "./kustomize.ts";

type Obj = Record<string, any>;

const seconds = (conf: string, key: string) => {
  const value = conf.match(new RegExp(`^\\s*${key}:\\s*(\\d+)s\\s*$`, "m"))?.[1];
  return value === undefined ? undefined : Number(value);
};

describe("the NATS StatefulSet's stop", () => {
  for (const overlay of ["dev", "prod"])
    it(`signals lame-duck mode before SIGTERM and waits it out (${overlay})`, () => {
      const manifests = parseManifests(renderForLint(overlay)) as Obj[];
      const nats = manifests.find((m) => m.kind === "StatefulSet" && m.metadata.name === "nats")!;
      const conf = manifests.find((m) => m.kind === "ConfigMap" && m.metadata.name === "nats-config")!.data[
        "nats.conf"
      ] as string;
      const pod = nats.spec.template.spec;
      const pidFile = conf.match(/^\s*pid_file:\s*(\S+)\s*$/m)?.[1];
      expect(pidFile).toBeDefined();
      expect(pod.containers[0].lifecycle.preStop.exec.command).toEqual([
        "nats-server",
        "--signal",
        `ldm=${pidFile}`,
      ]);
      // nats-server ignores SIGTERM while in lame-duck mode; the kubelet's SIGKILL at the end of the grace period
      // would still cut it short.
      const duration = seconds(conf, "lame_duck_duration");
      const grace = seconds(conf, "lame_duck_grace_period");
      expect(duration).toBeGreaterThanOrEqual(30);
      expect(pod.terminationGracePeriodSeconds).toBeGreaterThan((duration ?? 0) + (grace ?? 10));
    });
});
