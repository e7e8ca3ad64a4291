// An agent with @x402/fetch and @humanpass/human-proof/client: pays URL once and prints what it got as JSON.
import {
  buildDIDFromAddress,
  createAttestationAwareSelector,
  createHumanProofExtension,
  withoutRedirects,
} from "@humanpass/human-proof/client";
import { x402Client } from "@x402/core/client";
import { decodePaymentResponseHeader } from "@x402/core/http";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";

const [url] = process.argv.slice(2);
const account = privateKeyToAccount(process.env.AGENT_KEY);
const selector = createAttestationAwareSelector(buildDIDFromAddress(account.address), undefined, {
  attestationsApiUrl: process.env.ATTESTATIONS_API_URL,
});
// x402 pays only in well-known assets unless told otherwise; the devnet's USDC is not one of them.
const client = new x402Client(selector.selector)
  .register("eip155:*", new ExactEvmScheme(account))
  .setSpendControls({
    allowedAssets: [{ network: `eip155:${process.env.CHAIN_ID}`, asset: process.env.USDC }],
  });
client.registerExtension(
  createHumanProofExtension(
    { address: account.address, signMessage: (message) => account.signMessage({ message }) },
    { selector },
  ),
);
// Redirects are not followed: x402 would send the payment to the URL first requested, not to the one it checked.
const pay = wrapFetchWithPayment(withoutRedirects(fetch), client);
const response = await pay(url);
const settlement = response.headers.get("payment-response");
process.stdout.write(
  `${JSON.stringify({
    status: response.status,
    body: await response.json(),
    transaction: settlement ? decodePaymentResponseHeader(settlement).transaction : null,
  })}\n`,
);
