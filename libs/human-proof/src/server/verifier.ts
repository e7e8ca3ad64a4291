import { createHumanLookup } from "@humanpass/attestations-client";
import { attestationsClient } from "../common/attestations.ts";
import { DEFAULT_AGENT_OWNERSHIP_SCHEMA } from "../common/constants.ts";
import type { PoUVerifier, PoUVerifierOptions } from "./types.ts";

/**
 * Resolves an agent DID to its human through the attestations API: the most recent ownership record, then that
 * record's `fromId` through the nullifier endpoint. Any error status (other than the nullifier endpoint's own
 * 404), timeout, network failure or unreadable record throws `AttestationsApiError`: "cannot tell", never "not
 * registered".
 */
export function createPoUVerifier(options: PoUVerifierOptions = {}): PoUVerifier {
  const ownershipSchema = options.agentOwnershipSchema || DEFAULT_AGENT_OWNERSHIP_SCHEMA;
  const client = attestationsClient(options);
  const lookup = createHumanLookup(client, ownershipSchema);
  return {
    ownershipSchema,
    lookupHuman: (did) => lookup.byDid(did),
    async hasAttestation(did: string, chainId: string, schema: string): Promise<boolean> {
      if (options.hasAttestation) return options.hasAttestation(did, chainId, schema);
      return client.hasAttestation(schema, { recipientDid: did });
    },
  };
}
