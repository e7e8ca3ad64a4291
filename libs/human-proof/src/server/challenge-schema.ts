/** JSON schema of the proof, advertised in the challenge (same as Billions' server package). */
export function buildHumanProofSchema(): Record<string, unknown> {
  return {
    type: "object",
    required: [
      "domain",
      "version",
      "nonce",
      "issuedAt",
      "chainId",
      "type",
      "address",
      "signature",
      "requiredAttestations",
    ],
    properties: {
      domain: { type: "string" },
      uri: { type: "string" },
      version: { type: "string" },
      nonce: { type: "string" },
      issuedAt: { type: "string" },
      expirationTime: { type: "string" },
      statement: { type: "string" },
      resources: { type: "array", items: { type: "string" } },
      chainId: { type: "string" },
      type: { enum: ["eip191", "ed25519"] },
      address: { type: "string" },
      signature: { type: "string" },
      requiredAttestations: { type: "array", items: { type: "string" } },
    },
    additionalProperties: true,
  };
}
