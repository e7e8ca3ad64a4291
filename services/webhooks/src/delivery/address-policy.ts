import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";

/** Loopback, private, link-local, shared, multicast and reserved ranges: never reached unless allow-listed. */
const NON_PUBLIC = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const)
  NON_PUBLIC.addSubnet(net, prefix, "ipv4");
for (const [net, prefix] of [
  ["::", 128],
  ["::1", 128],
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8],
] as const)
  NON_PUBLIC.addSubnet(net, prefix, "ipv6");

export class RefusedAddressError extends Error {
  override name = "RefusedAddressError";
}

/**
 * Which addresses an endpoint may resolve to. `allow` lists networks (CIDR) that are reached even though they are
 * not public: a receiver on the operator's own network, or a test's receiver on 127.0.0.1.
 */
export interface AddressPolicy {
  /** Throws `RefusedAddressError` unless `address` is public or allow-listed. */
  check(address: string): void;
  /** Whether `address` is in one of the allow-listed networks. */
  allowListed(address: string): boolean;
  /** Resolves `host` and checks every address; the first is the one to connect to. */
  resolve(host: string): Promise<{ address: string; family: number }>;
}

export function createAddressPolicy(allowedNetworks: string[]): AddressPolicy {
  const allowed = new BlockList();
  for (const cidr of allowedNetworks) {
    const [net, bits] = cidr.split("/");
    const family = isIP(net ?? "") === 6 ? "ipv6" : "ipv4";
    if (!isIP(net ?? "")) throw new Error(`not a network: ${cidr}`);
    allowed.addSubnet(net!, Number(bits ?? (family === "ipv6" ? 128 : 32)), family);
  }
  const unmapped = (address: string) => {
    const ip = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1] ?? address;
    return { ip, family: isIP(ip) === 6 ? ("ipv6" as const) : ("ipv4" as const) };
  };
  const allowListed = (address: string) => {
    const { ip, family } = unmapped(address);
    return allowed.check(ip, family);
  };
  const check = (address: string) => {
    const { ip, family } = unmapped(address);
    if (NON_PUBLIC.check(ip, family) && !allowed.check(ip, family))
      throw new RefusedAddressError(`${address} is not a public address`);
  };
  return {
    check,
    allowListed,
    async resolve(host) {
      const bare = host.replace(/^\[|\]$/g, "");
      const addresses = isIP(bare)
        ? [{ address: bare, family: isIP(bare) }]
        : await lookup(bare, { all: true, verbatim: true });
      if (addresses.length === 0) throw new RefusedAddressError(`${host} does not resolve`);
      for (const a of addresses) check(a.address);
      return addresses[0]!;
    },
  };
}
