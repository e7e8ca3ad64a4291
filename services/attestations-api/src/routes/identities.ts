import { type HttpApp, HttpError } from "@humanpass/http";
import { identityKind } from "@humanpass/identity";
import { Type } from "@sinclair/typebox";
import { getAddress } from "viem";
import { pageOfAttestations } from "../db/queries.ts";
import type { AttestationFilter } from "../db/types.ts";
import { attestationItem, envelope } from "../present.ts";
import type { RouteDeps } from "./context.ts";
import {
  AttestationListItem,
  DID_PATTERN,
  Envelope,
  ErrorBody,
  PagingOnlyQuery,
  pageRequest,
} from "./shapes.ts";

const DID_REGEX = new RegExp(DID_PATTERN);
const IDENTITY_MESSAGE = "identity must be a DID, an Ethereum address or an iden3 ID (decimal)";

/**
 * The identity told apart by its format: `value` its canonical form (checksummed address, plain decimal), `match`
 * the form the columns are compared in, and the columns of either side.
 */
export function resolveIdentity(identity: string) {
  switch (identityKind(identity)) {
    case "did":
      if (identity.length > 512 || !DID_REGEX.test(identity)) return null;
      return {
        kind: "did",
        value: identity,
        match: identity,
        attester: "attester_did",
        recipient: "recipient_did",
      } as const;
    case "ethereumAddress":
      return {
        kind: "address",
        value: getAddress(identity.toLowerCase()),
        match: identity.toLowerCase(),
        attester: "attester_address",
        recipient: "recipient_address",
      } as const;
    case "iden3Id":
      return {
        kind: "iden3Id",
        value: BigInt(identity).toString(),
        match: BigInt(identity).toString(),
        attester: "attester_iden3_id",
        recipient: "recipient_iden3_id",
      } as const;
    default:
      return null;
  }
}

export async function identityRoutes(app: HttpApp, reader: RouteDeps): Promise<void> {
  app.get(
    "/identities/:identity/attestations",
    {
      schema: {
        summary: "Attestations of one identity",
        description:
          "Every listed (not revoked) attestation where the identity is the attester or the recipient, oldest first. " +
          "`{identity}` is a DID (`did:…`), an Ethereum address (`0x` + 40 hex) or an iden3 ID (decimal), told apart by format; " +
          "`identity` in the answer is the value in its canonical form (checksummed address, decimal without leading zeros).",
        tags: ["identities"],
        params: Type.Object({ identity: Type.String() }),
        querystring: PagingOnlyQuery,
        response: {
          200: Envelope(AttestationListItem, { identity: Type.String() }),
          400: ErrorBody,
          429: ErrorBody,
        },
      },
    },
    async (request) => {
      const identity = resolveIdentity(request.params.identity);
      if (!identity) throw new HttpError(400, "invalid_identity", IDENTITY_MESSAGE);
      const page = pageRequest(request.query);
      const filter: AttestationFilter = {
        match: "any",
        conditions: [
          { column: identity.attester, value: identity.match },
          { column: identity.recipient, value: identity.match },
        ],
      };
      return {
        identity: identity.value,
        ...envelope(await pageOfAttestations(reader, filter, page), page, attestationItem),
      };
    },
  );
}
