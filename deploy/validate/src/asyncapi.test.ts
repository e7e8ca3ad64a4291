import { readFileSync } from "node:fs";
import { createCloudEvent, EVENTS, STREAMS, type StreamName } from "@humanpass/events";
import { Ajv } from "ajv";
import addFormats from "ajv-formats";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { buildAsyncApi, renderAsyncApi, withEventTables } from "./asyncapi.ts";
import { parseAsyncApi } from "./asyncapi-validate.ts";
import { repoPath } from "./paths.ts";

const committed = readFileSync(repoPath("docs/asyncapi.yaml"), "utf8");

describe("docs/asyncapi.yaml", () => {
  it("is what the event catalog generates (run `npm run docs -w @humanpass/deploy-validate` after changing it)", () => {
    expect(committed).toBe(renderAsyncApi());
  });

  it("is a valid AsyncAPI 3.0 document to the official parser, with a channel and payload schema for every subject of the catalog", async () => {
    const { problems, resolved } = await parseAsyncApi(committed);
    expect(problems).toEqual([]);
    for (const stream of Object.keys(EVENTS) as StreamName[]) {
      for (const type of Object.keys(EVENTS[stream])) {
        const subject = `${STREAMS[stream].domain}.${type}`;
        const channel = Object.values<any>(resolved!.channels).find((c) => c.address === subject);
        expect(channel, subject).toBeDefined();
        const data = channel.messages[type].payload.allOf[1].properties.data;
        expect(Object.keys(data.properties)).toEqual(Object.keys((EVENTS[stream] as any)[type].properties));
      }
    }
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

  it("fails validation when broken", async () => {
    const broken: any = buildAsyncApi();
    broken.operations.publish_chain_blocks_reverted.action = "publish";
    broken.channels.verifier_uniqueness_verified.address = 42;
    broken.operations.publish_chain_schema_registered.channel.$ref = "#/channels/chain_schema_renamed";
    const { problems, resolved } = await parseAsyncApi(broken);
    expect(resolved).toBeUndefined();
    expect(problems).toContainEqual(
      expect.objectContaining({ path: "/operations/publish_chain_blocks_reverted/action" }),
    );
    expect(problems).toContainEqual(
      expect.objectContaining({ path: "/channels/verifier_uniqueness_verified/address" }),
    );
    expect(problems).toContainEqual(
      expect.objectContaining({
        path: "/operations/publish_chain_schema_registered/channel/$ref",
        message: expect.stringContaining("chain_schema_renamed"),
      }),
    );
  });
});

describe("docs/events.md", () => {
  it("has the field tables the event catalog generates", () => {
    const markdown = readFileSync(repoPath("docs/events.md"), "utf8");
    expect(markdown).toBe(withEventTables(markdown));
  });
});
