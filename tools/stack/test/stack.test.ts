/**
 * The whole stack as `make up` starts it (devnet, five service processes, demo data), driven through the demo's
 * steps as assertions, with every service exporting its traces to a recording OTLP receiver.
 */
import {
  buildDIDFromAddress,
  createAttestationAwareSelector,
  createHumanProofClientExtension,
} from "@humanpass/human-proof";
import {
  connectTestNats,
  createTestDatabase,
  eventually,
  type TestDatabase,
  testNatsUrl,
} from "@humanpass/testing";
import { DeliverPolicy, type JsMsg, jetstream } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { erc20Abi } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReceivedSpan, startOtlpReceiver } from "../src/otlp-receiver.ts";
import { randomPrefix, type Stack, startStack } from "../src/stack.ts";
import {
  postTracedCallback,
  TOKEN_NOT_VERIFIED,
  verificationUnderCallback,
} from "../src/verification-callback.ts";

let database: TestDatabase;
let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
let stack: Stack;
let nc: NatsConnection;
const logs: string[] = [];

beforeAll(async () => {
  database = await createTestDatabase("stack");
  receiver = await startOtlpReceiver();
  stack = await startStack({
    databaseUrl: database.url,
    natsUrl: testNatsUrl(),
    prefix: randomPrefix(),
    log: (service, line) => logs.push(`${service} | ${line}`),
    logLevel: "warn",
    otlpEndpoint: receiver.url,
  });
  nc = await connectTestNats();
}, 240_000);

afterAll(async () => {
  await nc?.close();
  await stack?.stop();
  await receiver?.stop();
  await database?.drop();
  const { jetstreamManager } = await import("@nats-io/jetstream");
  const conn = await connectTestNats();
  const jsm = await jetstreamManager(conn);
  for await (const s of jsm.streams.list()) {
    if (stack && s.config.name.startsWith(`${stack.prefix.toUpperCase()}_`))
      await jsm.streams.delete(s.config.name);
  }
  await conn.close();
}, 60_000);

/** Every event the stack published on one stream, read back from JetStream. */
async function eventsOn(stream: string): Promise<JsMsg[]> {
  const consumer = await jetstream(nc).consumers.get(`${stack.prefix.toUpperCase()}_${stream}`, {
    deliver_policy: DeliverPolicy.All,
  });
  const out: JsMsg[] = [];
  const info = await consumer.info();
  const pending = info.num_pending;
  if (pending === 0) return out;
  const messages = await consumer.fetch({ max_messages: pending, expires: 2_000 });
  for await (const m of messages) out.push(m);
  return out;
}

const account = (index: number) => privateKeyToAccount(stack.devnet.accounts[index]!.privateKey);

async function claimDirect(agentIndex: number) {
  const agentAuth = stack.urls["agent-auth"];
  const challenge = (await fetch(`${agentAuth}/api/v1/challenge`).then((r) => r.json())) as {
    nonce: string;
    message: string;
  };
  const signature = await account(agentIndex).signMessage({ message: challenge.message });
  const send = () =>
    fetch(`${agentAuth}/api/v1/claim`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ nonce: challenge.nonce, signature }),
    });
  return { send };
}

function payingAgent(agentIndex: number) {
  const agent = account(agentIndex);
  const selector = createAttestationAwareSelector(buildDIDFromAddress(agent.address), undefined, {
    attestationsApiBaseUrl: `${stack.urls["attestations-api"]}/api/v1/attestations`,
  });
  const client = new x402Client(selector.selector)
    .register("eip155:*", new ExactEvmScheme(agent))
    .setSpendControls({ allowedAssets: [{ network: "eip155:45056", asset: stack.devnet.addresses.usdc }] });
  client.registerExtension(
    createHumanProofClientExtension(
      { address: agent.address, signMessage: (message: string) => agent.signMessage({ message }) },
      { selector },
    ),
  );
  return wrapFetchWithPayment(fetch, client);
}

const usdcOf = (address: `0x${string}`) =>
  stack.devnet.client.readContract({
    address: stack.devnet.addresses.usdc,
    abi: erc20Abi,
    functionName: "balanceOf",
    args: [address],
  });

describe("the whole stack", () => {
  it("serves the demo data: pairings on chain and humans verified through the verifier", async () => {
    const api = stack.urls["attestations-api"];
    const pairing = stack.seed.pairings[0]!;
    const list = await fetch(
      `${api}/api/v1/attestations?schemaId=${stack.seed.schemas.agentOwnership}&recipientDid=${pairing.recipient.did}`,
    ).then((r) => r.json() as Promise<{ totalItems: number; data: Record<string, unknown>[] }>);
    expect(list.totalItems).toBe(1);
    expect(list.data[0]).toMatchObject({
      fromDid: pairing.attester.did,
      toDid: pairing.recipient.did,
      fromId: pairing.attester.iden3Id.toString(),
    });
    const human = stack.humans.find((h) => h.did === pairing.attester.did)!;
    expect(await fetch(`${api}/api/v1/nullifier?userId=${human.userId}`).then((r) => r.json())).toEqual({
      userId: human.userId,
      nullifier: human.nullifier,
    });
  });

  it("an agent claims on the direct path; a replay is refused; one trace spans agent-auth, the API and the event", async () => {
    const claim = await claimDirect(4);
    const response = await claim.send();
    const body = (await response.json()) as Record<string, unknown>;
    const human = stack.humans.find((h) => h.did === stack.seed.pairings[0]!.attester.did)!;
    expect(response.status).toBe(200);
    expect(body).toEqual({
      verified: true,
      agentDid: buildDIDFromAddress(account(4).address),
      humanDid: human.did,
      humanId: human.nullifier,
    });
    const replay = await claim.send();
    expect(replay.status).toBe(403);
    expect(((await replay.json()) as { error: string }).error).toBe("unknown_or_expired_nonce");

    const verified = await eventually(async () =>
      (await eventsOn("AGENT_AUTH")).find((m) => m.subject.endsWith(".agent_auth.human_verified")),
    );
    expect(verified.json<{ data: { humanId: string } }>().data.humanId).toBe(human.nullifier);
    const traceparent = verified.headers?.get("traceparent");
    expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
    const [, traceId, publishSpanId] = traceparent!.split("-");

    const spans = await eventually(() => {
      const inTrace = receiver.spans.filter((s) => s.traceId === traceId);
      const apiServer = inTrace.find((s) => s.service === "attestations-api" && s.kind === 2);
      const publish = inTrace.find((s) => s.spanId === publishSpanId);
      const claimServer = inTrace.find((s) => s.service === "agent-auth" && s.kind === 2 && !s.parentSpanId);
      return apiServer && publish && claimServer ? inTrace : undefined;
    }, 20_000);
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const chain = (span: ReceivedSpan) => {
      const out: ReceivedSpan[] = [];
      for (
        let p = span.parentSpanId && byId.get(span.parentSpanId);
        p;
        p = p.parentSpanId ? byId.get(p.parentSpanId) : undefined
      )
        out.push(p);
      return out;
    };
    // The claim's HTTP server span is the root every other span of the trace descends from.
    const root = spans.find((s) => s.service === "agent-auth" && s.kind === 2 && !s.parentSpanId)!;
    const apiServer = spans.find((s) => s.service === "attestations-api" && s.kind === 2)!;
    const apiAncestors = chain(apiServer);
    expect(apiAncestors[0]).toMatchObject({ service: "agent-auth", kind: 3 });
    expect(apiAncestors.at(-1)).toBe(root);
    const publish = byId.get(publishSpanId)!;
    expect(publish).toMatchObject({ service: "agent-auth", kind: 4 });
    expect(chain(publish).at(-1)).toBe(root);
  });

  it("a wallet callback's trace holds the worker's proof verification under the callback's server span", async () => {
    const callback = await postTracedCallback(stack.urls.verifier);
    expect({ status: callback.status, body: callback.body }).toEqual(TOKEN_NOT_VERIFIED);
    const found = await eventually(() => {
      const result = verificationUnderCallback(
        receiver.spans
          .filter((s) => s.traceId === callback.traceId)
          .map((s) => ({ ...s, server: s.kind === 2 })),
      );
      return "verify" in result ? result : undefined;
    }, 20_000);
    expect(found.server.name).toMatch(/\/api\/callback/);
  });

  it("an agent pays the discounted tier until max_use_exceeded, then the standard tier; balances move by exactly that", async () => {
    const pay = payingAgent(6);
    const agent = account(6).address;
    const payTo = stack.devnet.accounts[9]!.address;
    const agentBefore = await usdcOf(agent);
    const payToBefore = await usdcOf(payTo);
    const paid: bigint[] = [];
    for (let i = 0; i < 7; i++) {
      const before = await usdcOf(agent);
      const response = await pay(`${stack.urls["payment-gateway"]}/api/v1/weather`);
      expect(response.status).toBe(200);
      expect(response.headers.get("payment-response")).toBeTruthy();
      paid.push(before - (await usdcOf(agent)));
    }
    expect(paid).toEqual([1_000n, 1_000n, 1_000n, 1_000n, 1_000n, 10_000n, 10_000n]);
    expect(agentBefore - (await usdcOf(agent))).toBe(25_000n);
    expect((await usdcOf(payTo)) - payToBefore).toBe(25_000n);
    const payments = await eventually(async () => {
      const events = await eventsOn("PAYMENTS");
      return events.filter((m) => m.subject.endsWith(".payment_settled")).length >= 7 ? events : undefined;
    });
    expect(payments.filter((m) => m.subject.endsWith(".payment_settled"))).toHaveLength(7);
    const exceeded = payments.filter((m) => m.subject.endsWith(".max_use_exceeded"));
    expect(exceeded).toHaveLength(1);
    expect(exceeded[0]!.json<{ data: { maxUse: number; resource: string } }>().data).toMatchObject({
      maxUse: 5,
      resource: `${stack.urls["payment-gateway"]}/api/v1/weather`,
    });
  });

  it("an agent without a human behind it is refused the humans-only route and pays full price elsewhere", async () => {
    const unpaired = account(10);
    const gateway = stack.urls["payment-gateway"];
    const unpaid = await fetch(`${gateway}/api/v1/humans-only/report`);
    expect(unpaid.status).toBe(402);
    expect(decodePaymentRequiredHeader(unpaid.headers.get("payment-required")!).accepts).toHaveLength(1);
    const before = await usdcOf(unpaired.address);
    expect((await payingAgent(10)(`${gateway}/api/v1/weather`)).status).toBe(200);
    expect(before - (await usdcOf(unpaired.address))).toBe(10_000n);
  });
});
