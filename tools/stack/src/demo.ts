// make demo: an agent walks through the product against the running stack (make up) and says what happens.

import { tail } from "@humanpass/events-cli";
import {
  buildDIDFromAddress,
  createAttestationAwareSelector,
  createHumanProofClientExtension,
} from "@humanpass/human-proof";
import { sleep } from "@humanpass/retry";
import { x402Client } from "@x402/core/client";
import { decodePaymentResponseHeader } from "@x402/core/http";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { createPublicClient, erc20Abi, formatUnits, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { readStackFile } from "./stack-file.ts";

const stack = readStackFile();
if (!stack) {
  process.stderr.write(
    "The stack is not running: start it with `make up` (in another terminal), then run `make demo`.\n",
  );
  process.exit(1);
}

const say = (text: string) => process.stdout.write(`\n\x1b[1m▶ ${text}\x1b[0m\n`);
const show = (text: string) => process.stdout.write(`  ${text}\n`);

const events = new AbortController();
const tailing = tail(
  { subjects: [], json: false, prefix: stack.prefix, servers: stack.natsUrl, credentials: stack.natsUser },
  { out: (line) => process.stdout.write(`  \x1b[2m[event]\x1b[0m ${line}\n`), err: () => {}, color: true },
  events.signal,
);

const account = privateKeyToAccount(stack.pairedAgents[0]!.privateKey as `0x${string}`);
const chain = createPublicClient({ transport: http(stack.devnetRpcUrl) });
const balance = async () =>
  chain.readContract({
    address: stack.usdc as `0x${string}`,
    abi: erc20Abi,
    functionName: "balanceOf",
    args: [account.address],
  });

say(`I am an AI agent with wallet ${account.address}.`);
show(`My DID, derived from that address: ${buildDIDFromAddress(account.address)}`);
show("A human paired with me on chain after verifying with a Proof of Uniqueness credential.");

say(`Asking agent-auth (${stack.urls["agent-auth"]}) for a challenge …`);
const challenge = (await fetch(`${stack.urls["agent-auth"]}/api/v1/challenge`).then((r) => r.json())) as {
  nonce: string;
  message: string;
};
show(`nonce ${challenge.nonce}; message to sign:`);
for (const line of challenge.message.split("\n")) show(`  | ${line}`);
const signature = await account.signMessage({ message: challenge.message });
say("Signed it with my key; claiming …");
const claim = await fetch(`${stack.urls["agent-auth"]}/api/v1/claim`, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ nonce: challenge.nonce, signature }),
});
show(`${claim.status} ${JSON.stringify(await claim.json())}`);
const replay = await fetch(`${stack.urls["agent-auth"]}/api/v1/claim`, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ nonce: challenge.nonce, signature }),
});
show(`Replaying the same signature: ${replay.status} ${JSON.stringify(await replay.json())}`);

const selector = createAttestationAwareSelector(buildDIDFromAddress(account.address), undefined, {
  attestationsApiBaseUrl: `${stack.urls["attestations-api"]}/api/v1/attestations`,
});
// The devnet's test USDC is no token x402 knows by default: allow it, capped at $0.10 a payment.
const client = new x402Client(selector.selector)
  .register("eip155:*", new ExactEvmScheme(account))
  .setSpendControls({
    allowedAssets: [{ network: `eip155:${stack.chainId}`, asset: stack.usdc, maxAmountPerPayment: "100000" }],
  });
client.registerExtension(
  createHumanProofClientExtension(
    { address: account.address, signMessage: (message: string) => account.signMessage({ message }) },
    { selector },
  ),
);
const pay = wrapFetchWithPayment(fetch, client);
const weather = `${stack.urls["payment-gateway"]}/api/v1/weather`;
const before = await balance();
say(`Buying ${weather} with x402; my USDC: ${formatUnits(before, 6)}`);
show("The route offers $0.01 to anyone and $0.001 to agents backed by a verified human, 5 times per human.");
for (let i = 1; i <= 7; i++) {
  const start = await balance();
  const response = await pay(weather);
  const receipt = response.headers.get("payment-response");
  const tx = receipt ? decodePaymentResponseHeader(receipt).transaction : "none";
  const paid = start - (await balance());
  const tier =
    paid === 1_000n ? "discounted (human) tier" : paid === 10_000n ? "standard tier" : "unexpected amount";
  show(`#${i}: ${response.status}, paid ${formatUnits(paid, 6)} USDC — ${tier}; tx ${tx}`);
}
say(`Done: my USDC went from ${formatUnits(before, 6)} to ${formatUnits(await balance(), 6)}.`);
show(
  "After the human's quota was used up the gateway answered max_use_exceeded, and the selector paid full price.",
);

await sleep(1_500);
events.abort();
await tailing;
