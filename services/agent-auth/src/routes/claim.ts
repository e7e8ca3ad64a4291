import { ErrorBody, type HttpApp, HttpError, Type } from "@humanpass/http";
import { HUMAN_PROOF_HEADER } from "@humanpass/human-proof";
import type { Counter } from "@humanpass/telemetry";
import type { DirectClaimResult } from "../claims/direct-claim.ts";
import type { HelperClaimResult } from "../claims/helper-claim.ts";

const HEADER = HUMAN_PROOF_HEADER.toLowerCase();

// The body is read by the direct path only, and spec 3 says an absent body counts as empty; a body that is
// not JSON is treated the same way, so it meets the nonce check instead of a parser error.
const NOT_JSON = Symbol("not JSON");

export interface ClaimRouteDeps {
  helper: (header: string) => Promise<HelperClaimResult>;
  direct: (body: unknown) => Promise<DirectClaimResult>;
  /** Claims by `path` and `outcome` (`accepted` or the refusal's code). */
  claims: Counter;
}

/** A refusal's code as a label: the codes are a fixed set of snake_case words; anything else is `error`. */
function outcomeOf(error: unknown): string {
  return error instanceof HttpError && /^[a-z_]{1,48}$/.test(error.code) ? error.code : "error";
}

/** `POST /api/v1/claim`: the helper path when a HUMAN-PROOF header is present, the direct path otherwise. */
export async function claimRoute(app: HttpApp, deps: ClaimRouteDeps): Promise<void> {
  await app.register(async (scope) => {
    scope.removeContentTypeParser("application/json");
    scope.addContentTypeParser(
      "application/json",
      { parseAs: "string", bodyLimit: 16_384 },
      (_request, text, done) => {
        if (text === "") return done(null, undefined);
        try {
          done(null, JSON.parse(text as string));
        } catch {
          done(null, NOT_JSON);
        }
      },
    );

    scope.post(
      "/api/v1/claim",
      {
        schema: {
          summary: "Claim as an agent with a verified human behind it (helper or direct path)",
          headers: Type.Object({ [HEADER]: Type.Optional(Type.String()) }),
          body: Type.Optional(
            Type.Object(
              { nonce: Type.Optional(Type.Unknown()), signature: Type.Optional(Type.Unknown()) },
              { description: "direct path: { nonce, signature }" },
            ),
          ),
          response: {
            200: Type.Object({
              verified: Type.Literal(true),
              agentDid: Type.String(),
              humanDid: Type.Optional(Type.String()),
              humanId: Type.Optional(Type.String()),
            }),
            "4xx": ErrorBody,
            "5xx": ErrorBody,
          },
        },
        // Documented shape only: what arrives is checked by the processing order itself, whose first steps
        // decide which refusal a malformed request gets.
        validatorCompiler: () => () => true,
      },
      async (request) => {
        const header = request.headers[HEADER];
        const path = typeof header === "string" ? "helper" : "direct";
        try {
          const result =
            typeof header === "string"
              ? await deps.helper(header)
              : await deps.direct(request.body === NOT_JSON ? undefined : request.body);
          deps.claims.add(1, { path, outcome: "accepted" });
          return result;
        } catch (e) {
          deps.claims.add(1, { path, outcome: outcomeOf(e) });
          throw e;
        }
      },
    );
  });
}
