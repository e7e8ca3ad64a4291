import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

type Ip = ipaddr.IPv4 | ipaddr.IPv6;

/** Cloud providers' instance metadata services: never reached, whatever the allow-list says. */
const METADATA = ["169.254.169.254", "169.254.170.2", "100.100.100.200", "fd00:ec2::254"].map((a) =>
  ipaddr.parse(a).toNormalizedString(),
);

/** Global unicast IPv6; everything outside it is reserved, local or special. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR("2000::/3");

/**
 * The networks an operator may open in production: private, shared, loopback, link-local and benchmarking
 * ranges. An allow-listed network outside them would reach the public Internet over plain http, or everything.
 */
const PRIVATE_NETWORKS = [
  "10.0.0.0/8",
  "100.64.0.0/10",
  "127.0.0.0/8",
  "169.254.0.0/16",
  "172.16.0.0/12",
  "192.168.0.0/16",
  "198.18.0.0/15",
  "::1/128",
  "fc00::/7",
  "fe80::/10",
  "fec0::/10",
].map((cidr) => ipaddr.parseCIDR(cidr));

const v4 = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);

/**
 * The IPv4 addresses an IPv6 transition address leads to: IPv4-mapped and -translated (`::ffff:a.b.c.d`,
 * `::ffff:0:a.b.c.d`), IPv4-compatible (`::a.b.c.d`), NAT64 (`64:ff9b::a.b.c.d`), 6to4 (`2002:AABB:CCDD::`) and
 * Teredo (server and client). `undefined` for an address that embeds none.
 */
function embeddedIPv4(ip: ipaddr.IPv6): ipaddr.IPv4[] | undefined {
  const p = ip.parts as [number, number, number, number, number, number, number, number];
  switch (ip.range()) {
    case "ipv4Mapped":
    case "rfc6145":
      return [v4(p[6], p[7])];
    case "rfc6052":
      // 64:ff9b:1::/48 is for local use and its embedding depends on the operator's prefix length: no IPv4
      // address can be read from it with certainty, so it is judged as a non-public one.
      return p[2] === 0 ? [v4(p[6], p[7])] : [new ipaddr.IPv4([0, 0, 0, 0])];
    case "6to4":
      return [v4(p[1], p[2])];
    case "teredo":
      return [v4(p[2], p[3]), v4(p[6] ^ 0xffff, p[7] ^ 0xffff)];
  }
  if (p.slice(0, 6).every((part) => part === 0) && (p[6] !== 0 || p[7] > 1)) return [v4(p[6], p[7])];
  return undefined;
}

function isPublic(ip: Ip): boolean {
  if (ip.kind() === "ipv4") return ip.range() === "unicast";
  const v6 = ip as ipaddr.IPv6;
  const embedded = embeddedIPv4(v6);
  if (embedded) return embedded.every(isPublic);
  return v6.match(GLOBAL_UNICAST_V6) && v6.range() === "unicast";
}

const within = (ip: Ip, network: [Ip, number]) => ip.kind() === network[0].kind() && ip.match(network);

/** Parses `cidr` (an address alone is a network of one), or throws naming it. */
export function parseNetwork(cidr: string): [Ip, number] {
  const text = cidr.trim();
  if (ipaddr.isValidCIDR(text)) return ipaddr.parseCIDR(text);
  if (isIP(text)) {
    const ip = ipaddr.parse(text);
    return [ip, ip.kind() === "ipv4" ? 32 : 128];
  }
  throw new Error(`not a network (CIDR): ${cidr}`);
}

/** The networks of `cidrs` that reach beyond the private ranges (e.g. `0.0.0.0/0`): refused in production. */
export function networksBeyondPrivate(cidrs: string[]): string[] {
  return cidrs.filter((cidr) => {
    const [net, bits] = parseNetwork(cidr);
    return !PRIVATE_NETWORKS.some(
      (outer) => net.kind() === outer[0].kind() && bits >= outer[1] && net.match(outer),
    );
  });
}

export class RefusedAddressError extends Error {
  override name = "RefusedAddressError";
}

/**
 * Which addresses an endpoint may resolve to. `allow` lists networks (CIDR) that are reached even though they are
 * not public: a receiver on the operator's own network, or a test's receiver on 127.0.0.1.
 */
export interface AddressPolicy {
  /** Throws `RefusedAddressError` unless `address` is public or allow-listed (and not a metadata service). */
  check(address: string): void;
  /** Whether `address` is in one of the allow-listed networks. */
  allowListed(address: string): boolean;
  /** Resolves `host` and checks every address; the first is the one to connect to. */
  resolve(host: string): Promise<{ address: string; family: number }>;
}

export function createAddressPolicy(allowedNetworks: string[]): AddressPolicy {
  const allowed = allowedNetworks.map(parseNetwork);
  // An IPv4-mapped address is the IPv4 address itself to the socket that connects to it.
  const parse = (address: string): Ip => ipaddr.process(address.replace(/^\[|\]$/g, ""));
  const allowListed = (address: string) => {
    const ip = parse(address);
    return allowed.some((network) => within(ip, network));
  };
  const check = (address: string) => {
    if (!isIP(address.replace(/^\[|\]$/g, "")))
      throw new RefusedAddressError(`${address} is not an IP address`);
    const ip = parse(address);
    if (METADATA.includes(ip.toNormalizedString()))
      throw new RefusedAddressError(`${address} is a cloud metadata service`);
    if (!isPublic(ip) && !allowed.some((network) => within(ip, network)))
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
