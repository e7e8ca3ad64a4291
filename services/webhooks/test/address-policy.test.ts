import { describe, expect, it } from "vitest";
import { createAddressPolicy } from "../src/index.ts";

/** What the policy says of `address`: "ok" or its refusal. */
function verdict(policy: ReturnType<typeof createAddressPolicy>, address: string): string {
  try {
    policy.check(address);
    return "ok";
  } catch (e) {
    return (e as Error).message;
  }
}

describe("the address policy", () => {
  const policy = createAddressPolicy([]);

  it("refuses IPv6 transition forms of a non-public IPv4 address, as it refuses the IPv4 address", () => {
    for (const [address, embeds] of [
      ["::127.0.0.1", "IPv4-compatible"],
      ["::10.1.2.3", "IPv4-compatible"],
      ["::ffff:127.0.0.1", "IPv4-mapped"],
      ["::ffff:0:127.0.0.1", "IPv4-translated"],
      ["::ffff:0:192.168.0.1", "IPv4-translated"],
      ["64:ff9b::10.0.0.1", "NAT64"],
      ["64:ff9b::7f00:1", "NAT64"],
      ["64:ff9b:1::a00:1", "NAT64, local use"],
      ["2002:a00:1::1", "6to4 of 10.0.0.1"],
      ["2002:7f00:1::", "6to4 of 127.0.0.1"],
      ["2001:0:a00:1::f7f7:f7f7", "Teredo, server 10.0.0.1"],
      ["2001:0:808:808::80ff:fffe", "Teredo, client 127.0.0.1"],
    ])
      expect([address, embeds, verdict(policy, address!)]).toEqual([
        address,
        embeds,
        `${address} is not a public address`,
      ]);
  });

  it("refuses site-local, other non-global IPv6 and the cloud metadata services, even allow-listed", () => {
    for (const address of [
      "fec0::1",
      "fec0:1::2",
      "::",
      "::1",
      "100::1",
      "2001:db8::1",
      "3fff::1",
      "4000::1",
      "fe80::1",
    ])
      expect(verdict(policy, address)).toBe(`${address} is not a public address`);
    const open = createAddressPolicy(["169.254.0.0/16", "fd00::/8"]);
    for (const address of ["169.254.169.254", "::ffff:169.254.169.254", "fd00:ec2::254"])
      expect(verdict(open, address)).toBe(`${address} is a cloud metadata service`);
    expect(verdict(open, "169.254.1.1")).toBe("ok");
  });

  it("lets public addresses through, the IPv6 forms of public IPv4 addresses included", () => {
    for (const address of [
      "8.8.8.8",
      "2606:4700:4700::1111",
      "::ffff:8.8.8.8",
      "64:ff9b::8.8.8.8",
      "2002:808:808::1",
      "2001:0:808:808::f7f7:f7f7",
    ])
      expect([address, verdict(policy, address)]).toEqual([address, "ok"]);
  });
});
