import { connectTestNats, deleteTestStreams, testTopology } from "@humanpass/testing";
import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyTopology, StreamsMissingError, streamName, waitForStreams } from "../src/index.ts";

const topology = testTopology();
let nc: NatsConnection;
const lines: Array<{ msg: string; missing?: string[] }> = [];
const logger = pino({ level: "info" }, { write: (line: string) => lines.push(JSON.parse(line)) });

beforeAll(async () => {
  nc = await connectTestNats();
});

afterAll(async () => {
  await deleteTestStreams(nc, topology);
  await nc.close();
});

describe("a starting service waits for its streams", () => {
  it("gives up with a message that names the missing streams and the topology step", async () => {
    const jsm = await jetstreamManager(nc);
    const name = streamName(topology, "VERIFIER");
    const waited = waitForStreams(jsm, [name], { logger, timeoutMs: 300, intervalMs: 50 });
    await expect(waited).rejects.toThrow(StreamsMissingError);
    await expect(waited).rejects.toThrow(
      `JetStream streams ${name} do not exist: apply the topology first (\`npx humanpass nats topology\`, run by the migrations step)`,
    );
    expect(lines).toContainEqual(
      expect.objectContaining({
        msg: expect.stringMatching(/^waiting for JetStream streams/),
        missing: [name],
      }),
    );
  });

  it("goes on once the topology step has created them", async () => {
    const jsm = await jetstreamManager(nc);
    const names = (["CHAIN", "PAYMENTS"] as const).map((s) => streamName(topology, s));
    const waited = waitForStreams(jsm, names, { logger, timeoutMs: 60_000, intervalMs: 50 });
    const applied = await applyTopology(jsm, topology);
    expect(applied).toEqual(expect.arrayContaining(names));
    await waited;
  });
});
