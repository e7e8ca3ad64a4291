import { describe, expect, it, vi } from "vitest";
import { testSettings } from "../test/support/settings.ts";
import { buildAuthorizationRequest } from "./authorization-request.ts";
import { iden3Auth } from "./verification/iden3-modules.ts";

describe("buildAuthorizationRequest", () => {
  it("is the message @iden3/js-iden3-auth's createAuthorizationRequest builds, with the session's proof request", () => {
    vi.useFakeTimers({ now: Date.parse("2026-03-01T12:00:00.700Z"), toFake: ["Date"] });
    try {
      const expiresAt = new Date("2026-03-01T12:10:00.900Z");
      const ours = buildAuthorizationRequest(testSettings, 42, expiresAt);
      const library = iden3Auth.auth.createAuthorizationRequest(
        testSettings.reason,
        testSettings.audienceDid,
        `${testSettings.hostUrl}/api/callback?sessionId=42`,
        { expires_time: expiresAt },
      );
      expect(ours.thid).toBe(ours.id);
      expect(ours.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(ours.id).not.toBe(buildAuthorizationRequest(testSettings, 42, expiresAt).id);
      expect({ ...ours, id: "", thid: "", body: { ...ours.body, scope: [] } }).toStrictEqual({
        ...library,
        id: "",
        thid: "",
      });
      expect(ours.body.scope.map((scope) => scope.id)).toEqual([42]);
    } finally {
      vi.useRealTimers();
    }
  });
});
