import { describe, expect, it } from "vitest";
import { allowlistSchema, KeyAllowlist, normalizeAddress, normalizeOrigin } from "./allowlist";

describe("allowlist entries", () => {
  it("stores origins lower-cased, without a trailing slash, internationalised names as punycode", () => {
    expect(normalizeOrigin(" HTTPS://App.Example.com/ ")).toEqual({ value: "https://app.example.com" });
    expect(normalizeOrigin("example.com")).toEqual({ value: "example.com" });
    expect(normalizeOrigin("*.Example.com")).toEqual({ value: "*.example.com" });
    expect(normalizeOrigin("http://localhost:3000")).toEqual({ value: "http://localhost:3000" });
    expect(normalizeOrigin("example.com:80")).toEqual({ value: "example.com:80" });
    expect(normalizeOrigin("bücher.example")).toEqual({ value: "xn--bcher-kva.example" });
  });

  it("refuses what is not an origin, and wildcards wider than a domain", () => {
    for (const bad of ["https://example.com/path", "example.com?x=1", "user@example.com", "exa mple.com", "*", "*.com", "a.*.example.com", "-bad-.example.com", "https://"]) {
      expect(normalizeOrigin(bad), bad).toHaveProperty("error");
    }
    expect(normalizeOrigin("*.com")).toEqual({ error: expect.stringContaining("too broad") });
  });

  it("stores addresses and ranges in canonical form, a range from its network address", () => {
    expect(normalizeAddress("203.0.113.7")).toEqual({ value: "203.0.113.7" });
    expect(normalizeAddress("10.1.2.3/8")).toEqual({ value: "10.0.0.0/8" });
    expect(normalizeAddress("2001:DB8:0:0::1/32")).toEqual({ value: "2001:db8::/32" });
    expect(normalizeAddress("::ffff:192.0.2.1")).toEqual({ value: "192.0.2.1" });
    // An IPv4-mapped range is the IPv4 range it maps, as a mapped address is that address.
    expect(normalizeAddress("::ffff:127.0.0.0/104")).toEqual({ value: "127.0.0.0/8" });
    expect(normalizeAddress("::ffff:198.51.100.7/128")).toEqual({ value: "198.51.100.7/32" });
    for (const bad of ["10.0.0.300", "10.0.0.0/33", "2001:db8::/129", "10.0.0.0/x", "1.2.3", "0x7f.1", "fe80::1%eth0", "10.0.0.0/8/8", "example.com"]) {
      expect(normalizeAddress(bad), bad).toHaveProperty("error");
    }
    expect(normalizeAddress("10.0.0.0/33")).toEqual({ error: '"10.0.0.0/33": an IPv4 prefix length is at most 32.' });
  });

  it("validates lists: blank lines ignored, duplicates kept once, at most 25 each, the first bad entry named", () => {
    expect(allowlistSchema.parse({ origins: ["example.com", "", "EXAMPLE.com"], ips: ["10.0.0.1", " "] })).toEqual({ origins: ["example.com"], ips: ["10.0.0.1"] });
    const many = allowlistSchema.safeParse({ origins: [], ips: Array.from({ length: 26 }, (_, i) => `10.0.0.${i}`) });
    expect(many.success ? undefined : many.error.issues[0]?.message).toBe("A key allows at most 25 addresses; 26 were given.");
    const bad = allowlistSchema.safeParse({ origins: ["ok.example", "https://x.example/path"], ips: [] });
    expect(bad.success ? undefined : bad.error.issues[0]?.message).toContain('"https://x.example/path" is not an origin');
  });
});

describe("allowlist matching", () => {
  const ip = (v: string) => () => v;

  it("matches origins exactly, by any scheme or port when none is given, and subdomains by wildcard", () => {
    const allow = KeyAllowlist.compile(["https://app.example.com", "*.example.org", "localhost", "http://dev.example.net:8080"], [])!;
    const ok = (origin: string | undefined) => allow.refusal(origin, ip("127.0.0.1")) === undefined;
    expect(ok("https://app.example.com")).toBe(true);
    expect(ok("https://app.example.com:443")).toBe(true);
    expect(ok("http://app.example.com")).toBe(false);
    expect(ok("https://evil.app.example.com")).toBe(false);
    expect(ok("https://a.example.org")).toBe(true);
    expect(ok("http://a.b.example.org:9000")).toBe(true);
    expect(ok("https://example.org")).toBe(false);
    expect(ok("https://badexample.org")).toBe(false);
    expect(ok("http://localhost:3000")).toBe(true);
    expect(ok("http://dev.example.net:8080")).toBe(true);
    expect(ok("http://dev.example.net")).toBe(false);
    expect(ok("null")).toBe(false);
    expect(allow.refusal("https://evil.example", ip("127.0.0.1"))).toBe("The origin https://evil.example is not in this key's allowlist.");
    expect(allow.refusal(undefined, ip("127.0.0.1"))).toContain("has no Origin header");
  });

  it("matches addresses and IPv4/IPv6 ranges, IPv4-mapped IPv6 clients as IPv4", () => {
    const allow = KeyAllowlist.compile([], ["198.51.100.0/24", "2001:db8::/32", "203.0.113.7"])!;
    const ok = (address: string) => allow.refusal(undefined, ip(address)) === undefined;
    expect(ok("198.51.100.200")).toBe(true);
    expect(ok("::ffff:198.51.100.1")).toBe(true);
    expect(ok("198.51.101.1")).toBe(false);
    expect(ok("203.0.113.7")).toBe(true);
    expect(ok("203.0.113.8")).toBe(false);
    expect(ok("2001:db8:ffff::1")).toBe(true);
    expect(ok("2001:db9::1")).toBe(false);
    expect(ok("unknown")).toBe(false);
    expect(allow.refusal(undefined, ip("192.0.2.1"))).toBe("The address 192.0.2.1 is not in this key's allowlist.");
  });

  it("an IPv4-mapped range entered through the schema matches IPv4 clients", () => {
    const { ips } = allowlistSchema.parse({ origins: [], ips: ["::ffff:127.0.0.0/104"] });
    const allow = KeyAllowlist.compile([], ips)!;
    expect(allow.refusal(undefined, ip("127.0.0.1"))).toBeUndefined();
    expect(allow.refusal(undefined, ip("::ffff:127.0.0.9"))).toBeUndefined();
    expect(allow.refusal(undefined, ip("128.0.0.1"))).toBe("The address 128.0.0.1 is not in this key's allowlist.");
  });

  it("compiles to nothing when both lists are empty, and needs both lists to pass when both are set", () => {
    expect(KeyAllowlist.compile([], [])).toBeUndefined();
    const both = KeyAllowlist.compile(["example.com"], ["10.0.0.0/8"])!;
    expect(both.refusal("https://example.com", ip("10.1.1.1"))).toBeUndefined();
    expect(both.refusal("https://example.com", ip("11.1.1.1"))).toContain("address 11.1.1.1");
    expect(both.refusal("https://other.com", ip("10.1.1.1"))).toContain("origin https://other.com");
  });
});
