// An agent with Billions' published client (@billionsnetwork/x402-human-proof-client 0.1.7) as its README shows it:
// the attestation-aware selector refreshed before each payment, the extension signing the proof. Pays URL once.
import {
  buildDIDFromAddress,
  createAttestationAwareSelector,
  createHumanProofExtension,
} from "@billionsnetwork/x402-human-proof-client";
import { x402Client } from "@x402/core/client";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";

const [url] = process.argv.slice(2);
const attestationsApiBaseUrl = `${process.env.ATTESTATIONS_API_URL}/api/v1/attestations`;
const account = privateKeyToAccount(process.env.AGENT_KEY);
// Billions' selector checks the schemas it is given (default: Billions' own AgentOwnership schema id).
const selector = createAttestationAwareSelector(
  buildDIDFromAddress(account.address),
  [process.env.OWNERSHIP_SCHEMA],
  { attestationsApiBaseUrl },
);
// x402 pays only in well-known assets unless told otherwise; the devnet's USDC is not one of them.
const client = new x402Client(selector.selector).setSpendControls({
  allowedAssets: [{ network: `eip155:${process.env.CHAIN_ID}`, asset: process.env.USDC }],
});
registerExactEvmScheme(client, { signer: account });
client.registerExtension(
  createHumanProofExtension(
    { address: account.address, signMessage: (message) => account.signMessage({ message }) },
    { attestationsApiBaseUrl },
  ),
);
await selector.refresh();
client.onBeforePaymentCreation(async () => {
  await selector.refresh();
});
const response = await wrapFetchWithPayment(fetch, client)(url);
process.stdout.write(`${JSON.stringify({ status: response.status, body: await response.json() })}\n`);
