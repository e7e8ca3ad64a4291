// The bounded workload of the compose test: chain writes the indexer must carry to the API (with revocations),
// agent claims, and paid requests against a route with a per-human quota. Every HTTP response is recorded.

import type { Devnet, DevnetAccount } from "@humanpass/devnet";
import { identityFromAddress, recordAttestation, revokeAttestation } from "@humanpass/devnet";
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
import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";

export interface Response {
  service: string;
  method: string;
  path: string;
  status: number;
  at: number;
  ms: number;
}

export interface Paid {
  agent: string;
  status: number;
  tx?: string;
}

export interface WorkloadRecord {
  responses: Response[];
  attestations: { id: Hex; revoked: boolean }[];
  claims: { status: number }[];
  paid: Paid[];
}

/** A fetch that records every response (status 0: no response at all) under the service's name. */
export function recordingFetch(urls: Record<string, string>, into: Response[]): typeof fetch {
  const serviceOf = (url: string) =>
    Object.entries(urls).find(([, base]) => url.startsWith(base))?.[0] ?? "other";
  return async (input, init) => {
    const request = new Request(input, init);
    const at = Date.now();
    const entry = {
      service: serviceOf(request.url),
      method: request.method,
      path: new URL(request.url).pathname,
    };
    try {
      const response = await fetch(request, { signal: AbortSignal.timeout(60_000) });
      into.push({ ...entry, status: response.status, at, ms: Date.now() - at });
      return response;
    } catch (error) {
      into.push({ ...entry, status: 0, at, ms: Date.now() - at });
      throw error;
    }
  };
}

export interface WorkloadOptions {
  devnet: Devnet;
  urls: Record<string, string>;
  usdc: string;
  chainId: number;
  /** Accounts that write attestations (each its own sender, so their nonces never race). */
  attesters: DevnetAccount[];
  reviewSchema: Hex;
  agents: DevnetAccount[];
  attestationsPerAttester: number;
  claimsPerAgent: number;
  paidPerAgent: number;
  /** Paid requests each agent makes even once `done()` says stop, so that every human goes past its `maxUse`. */
  minPaidPerAgent?: number;
  /** Nothing starts after this; every loop also stops after its count, or once `done()` says so. */
  deadline: number;
  done?: () => boolean;
  /** Pause between two rounds of each loop. */
  gaps?: { attestationMs: number; claimMs: number; paidMs: number };
  record: WorkloadRecord;
}

/** Retries a chain write the devnet refused for a transient reason (bounded: 5 tries). */
async function chainRetry<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (error) {
      if (attempt >= 5) throw error;
      await sleep(500 * attempt);
    }
  }
}

export async function writeAttestations(
  options: Pick<WorkloadOptions, "devnet" | "attesters" | "reviewSchema" | "deadline" | "record" | "done">,
  count: number,
  gapMs: number,
): Promise<void> {
  await Promise.all(
    options.attesters.map(async (attester, a) => {
      const identity = identityFromAddress(attester.address);
      for (let i = 0; i < count && Date.now() < options.deadline && !options.done?.(); i++) {
        const recipient = identityFromAddress(options.devnet.accounts[(a + i) % 4]!.address);
        const { id } = await chainRetry(() =>
          recordAttestation(
            options.devnet,
            { schemaId: options.reviewSchema, attester: identity, recipient, revocable: true },
            { from: attester.address },
          ),
        );
        const entry = { id, revoked: false };
        options.record.attestations.push(entry);
        // Every third is revoked again, so the API must also apply revocations.
        if (i % 3 === 2) {
          await chainRetry(() => revokeAttestation(options.devnet, id, { from: attester.address }));
          entry.revoked = true;
        }
        await sleep(gapMs);
      }
    }),
  );
}

async function claims(options: WorkloadOptions, fetcher: typeof fetch): Promise<void> {
  const base = options.urls["agent-auth"];
  await Promise.all(
    options.agents.map(async (agent) => {
      const account = privateKeyToAccount(agent.privateKey);
      for (let i = 0; i < options.claimsPerAgent && Date.now() < options.deadline && !options.done?.(); i++) {
        try {
          const challenge = await fetcher(`${base}/api/v1/challenge`);
          if (challenge.status !== 200) {
            options.record.claims.push({ status: challenge.status });
            await sleep(options.gaps?.claimMs ?? 300);
            continue;
          }
          const { nonce, message } = (await challenge.json()) as { nonce: string; message: string };
          const claim = await fetcher(`${base}/api/v1/claim`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ nonce, signature: await account.signMessage({ message }) }),
          });
          await claim.arrayBuffer();
          options.record.claims.push({ status: claim.status });
        } catch {
          options.record.claims.push({ status: 0 });
        }
        await sleep(options.gaps?.claimMs ?? 300);
      }
    }),
  );
}

async function payments(options: WorkloadOptions, fetcher: typeof fetch): Promise<void> {
  const weather = `${options.urls["payment-gateway"]}/api/v1/weather`;
  await Promise.all(
    options.agents.map(async (agent) => {
      const account = privateKeyToAccount(agent.privateKey);
      const selector = createAttestationAwareSelector(buildDIDFromAddress(account.address), undefined, {
        attestationsApiBaseUrl: `${options.urls["attestations-api"]}/api/v1/attestations`,
        fetch: fetcher,
      } as never);
      const client = new x402Client(selector.selector)
        .register("eip155:*", new ExactEvmScheme(account))
        .setSpendControls({
          allowedAssets: [
            { network: `eip155:${options.chainId}`, asset: options.usdc, maxAmountPerPayment: "100000" },
          ],
        });
      client.registerExtension(
        createHumanProofClientExtension(
          { address: account.address, signMessage: (message: string) => account.signMessage({ message }) },
          { selector },
        ),
      );
      const pay = wrapFetchWithPayment(fetcher, client);
      const more = (i: number) => i < (options.minPaidPerAgent ?? 0) || !options.done?.();
      for (let i = 0; i < options.paidPerAgent && Date.now() < options.deadline && more(i); i++) {
        try {
          const response = await pay(weather);
          await response.arrayBuffer();
          const receipt = response.headers.get("payment-response");
          options.record.paid.push({
            agent: agent.address,
            status: response.status,
            tx: receipt ? decodePaymentResponseHeader(receipt).transaction : undefined,
          });
        } catch {
          options.record.paid.push({ agent: agent.address, status: 0 });
        }
        await sleep(options.gaps?.paidMs ?? 500);
      }
    }),
  );
}

/** Runs the three loops side by side until each has done its count (or the deadline passed). */
export async function runWorkload(options: WorkloadOptions): Promise<void> {
  const fetcher = recordingFetch(options.urls, options.record.responses);
  await Promise.all([
    writeAttestations(options, options.attestationsPerAttester, options.gaps?.attestationMs ?? 400),
    claims(options, fetcher),
    payments(options, fetcher),
  ]);
}
