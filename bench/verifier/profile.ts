import { Session } from "node:inspector/promises";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Which library a stack frame belongs to: the package under node_modules, else a readable label. */
function owner(url: string): string {
  if (!url) return "(native, GC, idle)";
  if (url.startsWith("wasm://")) return "WebAssembly (mcl-wasm pairing)";
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)(?!.*node_modules)/.exec(url);
  if (match) return match[1];
  if (url.startsWith("node:")) return "node internals";
  return url.replace(/^.*\/(services|libs|bench)\//, "$1/");
}

/** Self time of a CPU profile of `work`, grouped by package, largest first (share of sampled time). */
export async function profileByPackage(
  work: () => Promise<void>,
): Promise<Array<{ owner: string; share: number }>> {
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 200 });
  await session.post("Profiler.start");
  await work();
  const { profile } = (await session.post("Profiler.stop")) as unknown as { profile: Profile };
  session.disconnect();
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const totals = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    const key = owner(byId.get(id)?.callFrame.url ?? "");
    totals.set(key, (totals.get(key) ?? 0) + delta);
    total += delta;
  });
  return [...totals]
    .map(([key, time]) => ({ owner: key, share: time / total }))
    .sort((a, b) => b.share - a.share);
}
