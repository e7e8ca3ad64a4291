import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAddressPolicy } from "../src/index.ts";
import { adminApp, auth, fakeClock, type Harness, setUp } from "./support/harness.ts";

let harness: Harness;
beforeAll(async () => {
  harness = await setUp("webhooks_bad_input");
});
afterAll(async () => {
  await harness?.close();
});

const verified = ["agent_auth.human_verified"];

describe("malformed admin input", () => {
  it("answers 4xx with a code for each kind, stores nothing, never a 500", async () => {
    const app = await adminApp(harness.db, createAddressPolicy([]), fakeClock().clock);
    const endpoint = await harness.db
      .insertInto("endpoints")
      .values({
        url: "https://hooks.example.com/",
        event_types: verified,
        secrets: ["whsec_x"],
        created_at: new Date(),
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    const replay = `/admin/v1/endpoints/${endpoint.id}/dead-letters/replay`;
    const cases: [kind: string, url: string, body: unknown, status: number, code: string][] = [
      [
        "a URL without a host",
        "/admin/v1/endpoints",
        { url: "https://", eventTypes: verified },
        400,
        "invalid_url",
      ],
      [
        "an unclosed IPv6 bracket",
        "/admin/v1/endpoints",
        { url: "https://[::1/h", eventTypes: verified },
        400,
        "invalid_url",
      ],
      [
        "a space in the host",
        "/admin/v1/endpoints",
        { url: "http://a b/", eventTypes: verified },
        400,
        "invalid_url",
      ],
      [
        "a port above 65535",
        "/admin/v1/endpoints",
        { url: "https://a.example:99999/", eventTypes: verified },
        400,
        "invalid_url",
      ],
      [
        "port 0",
        "/admin/v1/endpoints",
        { url: "https://a.example:0/", eventTypes: verified },
        400,
        "invalid_url",
      ],
      [
        "an IPv4 octet above 255",
        "/admin/v1/endpoints",
        { url: "https://256.1.1.1/", eventTypes: verified },
        400,
        "invalid_url",
      ],
      [
        "a percent sign in the host",
        "/admin/v1/endpoints",
        { url: "https://exa%mple.com/", eventTypes: verified },
        400,
        "invalid_url",
      ],
      [
        "an IPv6 zone",
        "/admin/v1/endpoints",
        { url: "https://[fe80::1%25eth0]/", eventTypes: verified },
        400,
        "invalid_url",
      ],
      [
        "a lone surrogate in the URL",
        "/admin/v1/endpoints",
        { url: "https://\ud800.example/", eventTypes: verified },
        400,
        "invalid_string",
      ],
      [
        "NUL in the URL",
        "/admin/v1/endpoints",
        { url: "https://a.example/\u0000", eventTypes: verified },
        400,
        "invalid_string",
      ],
      [
        "NUL in an event type",
        "/admin/v1/endpoints",
        { url: "https://a.example/", eventTypes: ["\u0000"] },
        400,
        "invalid_string",
      ],
      [
        "NUL in a key",
        "/admin/v1/endpoints",
        { url: "https://a.example/", eventTypes: verified, "\u0000": 1 },
        400,
        "invalid_string",
      ],
      ["NUL in eventIds", replay, { eventIds: ["\u0000"] }, 400, "invalid_string"],
      ["a lone surrogate in eventIds", replay, { eventIds: ["id-\udfff"] }, 400, "invalid_string"],
      [
        "an event id of 10,000 characters",
        replay,
        { eventIds: ["e".repeat(10_000)] },
        400,
        "invalid_request",
      ],
      ["an unknown field beside eventIds", replay, { eventIds: [], more: 1 }, 400, "invalid_request"],
    ];
    const answers = [];
    for (const [kind, url, body] of cases) {
      const response = await app.inject({ method: "POST", url, headers: auth, payload: body as object });
      answers.push([kind, response.statusCode, response.json().error]);
    }
    expect(answers).toEqual(cases.map(([kind, , , status, code]) => [kind, status, code]));

    const query = await app.inject({
      method: "GET",
      url: `/admin/v1/endpoints/${endpoint.id}/dead-letters?limit=1&x=%00`,
      headers: auth,
    });
    expect([query.statusCode, query.json().error]).toEqual([400, "invalid_string"]);
    const listed = await app.inject({ method: "GET", url: "/admin/v1/endpoints", headers: auth });
    expect(listed.json().map((e: { id: string }) => e.id)).toEqual([endpoint.id]);
    await app.close();
  });
});
