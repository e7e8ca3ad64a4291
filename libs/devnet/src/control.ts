import type { Address, Hex } from "viem";
import type { Devnet } from "./devnet.ts";

/**
 * Mines `blocks` empty blocks, one `evm_mine` each. Not `hardhat_mine`: it reserves blocks it builds only when
 * asked for, and their hashes and state are not stable across reads, which looks like a reorg to an indexer.
 */
export async function mine(devnet: Devnet, blocks = 1): Promise<void> {
  for (let i = 0; i < blocks; i++) await devnet.client.request({ method: "evm_mine", params: [] } as never);
}

/** Takes an EVM snapshot; `revert(devnet, id)` returns the chain to it, orphaning every later block. */
export async function snapshot(devnet: Devnet): Promise<Hex> {
  return devnet.client.snapshot();
}

/** Returns to a snapshot. Hardhat forgets the snapshot (and later ones) once reverted to. */
export async function revert(devnet: Devnet, id: Hex): Promise<void> {
  const reverted = await devnet.client.request({ method: "evm_revert", params: [id] } as never);
  if (reverted !== true) throw new Error(`devnet snapshot ${id} does not exist`);
}

/** Automine on (the default) mines each transaction as it arrives; off leaves them pending until `mine`. */
export async function setAutomine(devnet: Devnet, enabled: boolean): Promise<void> {
  await devnet.client.setAutomine(enabled);
}

export async function blockNumber(devnet: Devnet): Promise<bigint> {
  return devnet.client.getBlockNumber({ cacheTime: 0 });
}

/**
 * The account to send from as `address`: devnet accounts are unlocked on the node; any other address is
 * impersonated and given gas money, which lets tests act as attesters that are not devnet accounts.
 */
export async function ensureSender(devnet: Devnet, address: Address): Promise<Address> {
  const known = devnet.accounts.some((account) => account.address.toLowerCase() === address.toLowerCase());
  if (!known) {
    await devnet.client.impersonateAccount({ address });
    await devnet.client.setBalance({ address, value: 10n ** 21n });
  }
  return address;
}
