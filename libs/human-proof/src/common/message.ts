/** Fields that make up the signed text (CAIP-122 / SIWE layout, byte-identical to Billions' packages). */
export type SignedMessageFields = {
  domain: string;
  address: string;
  statement?: string;
  uri?: string;
  version: string;
  chainId: string;
  nonce: string;
  issuedAt: string;
  expirationTime?: string;
  resources?: string[];
};

export function formatSIWEMessage(fields: SignedMessageFields): string {
  const statementBlock = fields.statement ? `\n${fields.statement}\n` : "\n";
  const expirationLine = fields.expirationTime ? `\nExpiration Time: ${fields.expirationTime}` : "";
  const resources = fields.resources?.length
    ? `\nResources:\n${fields.resources.map((resource) => `- ${resource}`).join("\n")}`
    : "";
  return `${fields.domain} wants you to sign in with your Ethereum account:
${fields.address}${statementBlock}
URI: ${fields.uri ?? ""}
Version: ${fields.version}
Chain ID: ${fields.chainId}
Nonce: ${fields.nonce}
Issued At: ${fields.issuedAt}${expirationLine}${resources}`;
}
