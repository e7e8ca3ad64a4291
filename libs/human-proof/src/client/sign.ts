import { formatSIWEMessage } from "../shared/message";
import type { HumanProofChallenge } from "../shared/types";

/** Any EOA signer: viem account or wallet client, ethers signer, or a custom one. */
export type EVMSigner = {
  address: string;
  signMessage(message: string): Promise<string>;
};

/**
 * Signs a human-proof challenge (the `extensions["human-proof"]` object of a 402, or the challenge JSON of
 * an instructions route) with an EOA key. Returns the proof JSON text for the `HUMAN-PROOF` header or the
 * x402 payment payload. Throws when `chainId` is not offered with type `eip191`.
 */
export async function signHumanProofChallengeEVM(
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
