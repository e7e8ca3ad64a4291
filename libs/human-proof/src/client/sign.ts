import { formatSIWEMessage } from "../common/message.ts";
import type { HumanProofChallenge } from "../common/types.ts";

/** Any EOA signer: viem account or wallet client, ethers signer, or a custom one. */
export type EVMSigner = {
  address: string;
  signMessage(message: string): Promise<string>;
};

/** The URL the proof will be presented to: a challenge signed for any other site or resource is refused. */
export type SigningExpectation = { resourceUrl: string };

function sameUrl(a: string, b: string): boolean {
  return URL.canParse(a) && URL.canParse(b) && new URL(a).href === new URL(b).href;
}

/**
 * Throws unless the challenge's `uri` is `resourceUrl` and its `domain` that URL's host: a server that hands out
 * a challenge issued for another site (to spend the proof there) gets nothing signed.
 */
export function assertChallengeFor(challenge: HumanProofChallenge, resourceUrl: string): void {
  const { uri, domain } = challenge.info ?? {};
  if (typeof uri !== "string" || !sameUrl(uri, resourceUrl)) {
    throw new Error(`the human-proof challenge is for "${uri}", not for the requested "${resourceUrl}"`);
  }
  const requested = new URL(resourceUrl);
  if (domain !== requested.hostname && domain !== requested.host) {
    throw new Error(`the human-proof challenge names domain "${domain}", not "${requested.hostname}"`);
  }
}

/** Why `challenge` must not be signed for `resourceUrl`, or null when it may. */
export function challengeRefusal(challenge: HumanProofChallenge, resourceUrl: string): string | null {
  try {
    assertChallengeFor(challenge, resourceUrl);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/**
 * Signs a human-proof challenge (the `extensions["human-proof"]` object of a 402, or the challenge JSON of an
 * instructions route) with an EOA key, for the URL the proof will be sent to: throws unless the challenge's `uri`
 * is `expected.resourceUrl` and its `domain` that URL's host, or when `chainId` is not offered with type `eip191`.
 * Returns the proof JSON text for the `HUMAN-PROOF` header or the x402 payment payload.
 */
export async function signHumanProofChallengeEVM(
  challenge: HumanProofChallenge,
  signer: EVMSigner,
  chainId: string,
  expected: SigningExpectation,
): Promise<string> {
  if (typeof expected?.resourceUrl !== "string") {
    throw new TypeError(
      "signHumanProofChallengeEVM needs { resourceUrl }: the URL the proof will be sent to",
    );
  }
  assertChallengeFor(challenge, expected.resourceUrl);
  return signHumanProofChallengeEVMUnchecked(challenge, signer, chainId);
}

/**
 * Signs whatever site and resource the challenge names (Billions' client's behaviour): a proof for a challenge
 * a hostile server relays is spendable where that challenge was issued. For tests and for callers that checked
 * the challenge's `domain` and `uri` themselves.
 */
export async function signHumanProofChallengeEVMUnchecked(
  challenge: HumanProofChallenge,
  signer: EVMSigner,
  chainId: string,
): Promise<string> {
  const chain = challenge.supportedChains?.find((c) => c.chainId === chainId && c.type === "eip191");
  if (!chain) {
    const offered = (challenge.supportedChains ?? []).map((c) => `${c.chainId} (${c.type})`).join(", ");
    throw new Error(`chain "${chainId}" is not offered for eip191 signing; offered: ${offered || "none"}`);
  }
  // Field order matches Billions' client so both produce the same JSON text.
  const completeInfo = { ...challenge.info, chainId, type: chain.type };
  const signature = await signer.signMessage(formatSIWEMessage({ ...completeInfo, address: signer.address }));
  return JSON.stringify({ ...completeInfo, address: signer.address, signature });
}
