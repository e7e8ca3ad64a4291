import { readFileSync } from "node:fs";
import { createCloudEvent, EVENTS, STREAMS, type StreamName } from "@humanpass/events";
import { Ajv } from "ajv";
import addFormats from "ajv-formats";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { buildAsyncApi, renderAsyncApi, withEventTables } from "./asyncapi";
import { validateAsyncApi } from "./asyncapi-validate";
import { repoPath } from "./paths";

const committed = readFileSync(repoPath("docs/asyncapi.yaml"), "utf8");

function refsOf(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) for (const n of node) refsOf(n, out);
  else if (node && typeof node === "object") {
    for (const [k, v] of Object.entries(node)) {
      if (k === "$ref" && typeof v === "string") out.push(v);
      else refsOf(v, out);
    }
  }
  return out;
}

function resolve(document: any, ref: string): unknown {
  return ref
    .slice(2)
    .split("/")
    .reduce(
      (node, key) => (node === undefined ? undefined : node[key.replace(/~1/g, "/").replace(/~0/g, "~")]),
      document,
    );
}

describe("docs/asyncapi.yaml", () => {
  it("is what the event catalog generates (run `npm run docs -w @humanpass/deploy-validate` after changing it)", () => {
    expect(committed).toBe(renderAsyncApi());
  });

  it("has a channel for every subject of the catalog, carrying its payload schema", () => {
    const document = parse(committed);
    for (const stream of Object.keys(EVENTS) as StreamName[]) {
      for (const type of Object.keys(EVENTS[stream])) {
        const subject = `${STREAMS[stream].domain}.${type}`;
        const channel = Object.values<any>(document.channels).find((c) => c.address === subject);
        expect(channel, subject).toBeDefined();
        const message: any = resolve(document, channel.messages[type].$ref);
        const data: any = resolve(document, message.payload.allOf[1].properties.data.$ref);
        expect(Object.keys(data.properties)).toEqual(Object.keys((EVENTS[stream] as any)[type].properties));
      }
    }
  });

  it("is a valid AsyncAPI 3.0 document whose every $ref resolves", () => {
    const document = parse(committed);
    expect(validateAsyncApi(document)).toEqual([]);
    for (const ref of refsOf(document)) expect(resolve(document, ref), ref).toBeDefined();
  });

  it("lets a subscriber validate real events with its payload schemas", () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    (addFormats as unknown as (a: Ajv) => void)(ajv);
    ajv.addSchema(parse(committed), "asyncapi");
    const validate = ajv.compile({ $ref: "asyncapi#/components/messages/payments_max_use_exceeded/payload" });
    const event = createCloudEvent({
      source: "payment-gateway",
      type: "max_use_exceeded",
      data: { humanId: "42", maxUse: 2, resource: "http://127.0.0.1:4021/weather", scope: "weather" },
    });
    expect(validate(event)).toBe(true);
    expect(validate({ ...event, data: { ...event.data, humanId: 42 } })).toBe(false);
    expect(validate({ ...event, type: "payment_settled" })).toBe(false);
  });

  it("fails validation when broken", () => {
    const broken: any = buildAsyncApi();
    broken.operations.publish_chain_blocks_reverted.action = "publish";
    delete broken.channels.verifier_uniqueness_verified.messages;
    broken.channels.verifier_uniqueness_verified.address = 42;
    const problems = validateAsyncApi(broken);
    expect(problems).toContainEqual(
      expect.objectContaining({ path: "/operations/publish_chain_blocks_reverted/action" }),
    );
    expect(problems).toContainEqual(
      expect.objectContaining({ path: "/channels/verifier_uniqueness_verified/address" }),
    );
  });
});

describe("docs/events.md", () => {
  it("has the field tables the event catalog generates", () => {
    const markdown = readFileSync(repoPath("docs/events.md"), "utf8");
    expect(markdown).toBe(withEventTables(markdown));
  });
});
