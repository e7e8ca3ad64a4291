import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { eventually } from "@humanpass/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Backend, startBackend, verifierEvents } from "./support/harness.ts";
import { SAME_PERSON } from "./support/settings.ts";

const processScript = fileURLToPath(new URL("./support/verifier-process.ts", import.meta.url));
let backend: Backend;
const children: ChildProcess[] = [];
const baseUrls: string[] = [];

async function startInstance(): Promise<string> {
  const child = spawn(process.execPath, ["--conditions=@humanpass/source", processScript], {
    env: { ...process.env, DATABASE_URL: backend.database.url, EVENTS_PREFIX: backend.topology.prefix },
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  let output = "";
  child.stdout?.setEncoding("utf8");
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout?.on("data", (chunk: string) => {
      output += chunk;
      const match = /listening (\d+)/.exec(output);
      if (match) resolve(Number(match[1]));
    });
    child.once("exit", (code) => reject(new Error(`verifier process exited (${code}) before listening`)));
  });
  return `http://127.0.0.1:${port}`;
}

beforeAll(async () => {
  backend = await startBackend("verifier_two_instances");
  baseUrls.push(...(await Promise.all([startInstance(), startInstance()])));
});

afterAll(async () => {
  for (const child of children) {
    if (child.exitCode === null) {
      child.kill("SIGTERM");
      await once(child, "exit");
    }
  }
  await backend?.close();
});

describe("two verifier processes on one database", () => {
  it("accept exactly one of 50 concurrent callbacks carrying the same nullifier", async () => {
    const sessionIds: number[] = [];
    for (let i = 0; i < 50; i++) {
      const response = await fetch(`${baseUrls[i % 2]}/api/verification-request`);
      expect(response.status).toBe(200);
      sessionIds.push(((await response.json()) as { body: { scope: { id: number }[] } }).body.scope[0].id);
    }
    expect(new Set(sessionIds).size).toBe(50);

    const answers = await Promise.all(
      sessionIds.map(async (sessionId, i) => {
        const response = await fetch(`${baseUrls[(i + 1) % 2]}/api/callback?sessionId=${sessionId}`, {
          method: "POST",
          headers: { "content-type": "text/plain" },
          body: "same-person-token",
        });
        return { sessionId, status: response.status, body: await response.json() };
      }),
    );

    const accepted = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status === 400);
    expect(accepted).toHaveLength(1);
    expect(refused).toHaveLength(49);
    for (const answer of refused)
      expect(answer.body).toEqual({ message: "This person has already verified." });

    const statuses = await Promise.all(
      sessionIds.map(
        async (id) =>
          ((await (await fetch(`${baseUrls[0]}/api/status/${id}`)).json()) as { status: string }).status,
      ),
    );
    expect(statuses.filter((s) => s === "success")).toHaveLength(1);
    expect(statuses.filter((s) => s === "pending")).toHaveLength(49);
    const winner = sessionIds[statuses.indexOf("success")];
    expect(winner).toBe(accepted[0].sessionId);

    const rows = await backend.db.selectFrom("nullifiers").selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ nullifier: SAME_PERSON.nullifier, session_id: String(winner) });
    const events = await eventually(async () => {
      const list = await verifierEvents(backend);
      return list.length > 0 && list;
    });
    expect(events.map((e) => (e.data as { sessionId: number }).sessionId)).toEqual([winner]);
  });
});
