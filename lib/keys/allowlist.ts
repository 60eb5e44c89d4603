import ipaddr from "ipaddr.js";
import { z } from "zod";

// Shared with the Keys page (inline validation): no Node.js modules here.

/** 4 or 6 for an IPv4 (dotted quad) or IPv6 address (no zone), else 0. */
function isIP(s: string): 0 | 4 | 6 {
  if (ipaddr.IPv4.isValidFourPartDecimal(s)) return 4;
  return s.includes(":") && !s.includes("%") && ipaddr.IPv6.isValid(s) ? 6 : 0;
}

/** Entries per list (origins, addresses) on one key. */
export const MAX_ALLOWLIST_ENTRIES = 25;

const SCHEME = /^([a-z][a-z0-9+.-]*):\/\//i;
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * An origin entry in its stored form, or why it is not one. Forms: `example.com` (any scheme and
 * port), `https://example.com`, `https://example.com:8443`, and `*.example.com` for every
 * subdomain of example.com at any depth (not example.com itself). Host names are lower-cased
 * and internationalised ones stored as punycode (`xn--…`), as browsers send them in Origin.
 */
export function normalizeOrigin(input: string): { value: string } | { error: string } {
  let rest = input.trim();
  let scheme = "";
  const s = SCHEME.exec(rest);
  if (s) {
    scheme = s[1]!.toLowerCase();
    rest = rest.slice(s[0].length);
  }
  if (rest.endsWith("/")) rest = rest.slice(0, -1);
  let wildcard = false;
  if (rest.startsWith("*.")) {
    wildcard = true;
    rest = rest.slice(2);
  }
  if (rest === "" || /[/?#@\s*\\]/.test(rest)) {
    return { error: `"${clip(input)}" is not an origin: use a host name such as app.example.com, https://app.example.com or *.example.com (no path).` };
  }
  let host: string;
  let port: string;
  try {
    const url = new URL(`http://${rest}`);
    host = url.hostname;
    // URL drops port 80 as the http default; keep what was written.
    port = url.port || (/:80$/.test(rest) ? "80" : "");
  } catch {
    return { error: `"${clip(input)}" is not an origin: use a host name such as app.example.com, https://app.example.com or *.example.com.` };
  }
  const ipv6 = host.startsWith("[");
  if (!ipv6 && !host.split(".").every((l) => LABEL.test(l))) {
    return { error: `"${clip(input)}" is not a valid host name.` };
  }
  if (wildcard && (ipv6 || isIP(host) !== 0 || !host.includes("."))) {
    return { error: `"${clip(input)}" is too broad: a wildcard needs a domain with at least two labels, such as *.example.com.` };
  }
  return { value: `${scheme ? `${scheme}://` : ""}${wildcard ? "*." : ""}${host}${port ? `:${port}` : ""}` };
}

/** An address entry in its stored form (`203.0.113.7`, `2001:db8::/32`; a range starts at its network address), or why it is not one. */
export function normalizeAddress(input: string): { value: string } | { error: string } {
  const text = input.trim();
  const [address = "", bits, extra] = text.split("/");
  const bad = { error: `"${clip(input)}" is not an IP address or CIDR range: use forms such as 203.0.113.7, 198.51.100.0/24 or 2001:db8::/32.` };
  if (extra !== undefined || isIP(address) === 0) return bad;
  if (bits === undefined) return { value: ipaddr.process(address).toString() };
  if (!/^\d{1,3}$/.test(bits)) return bad;
  const max = isIP(address) === 4 ? 32 : 128;
  if (Number(bits) > max) return { error: `"${clip(input)}": an IPv${max === 32 ? 4 : 6} prefix length is at most ${max}.` };
  const network = max === 32 ? ipaddr.IPv4.networkAddressFromCIDR(`${address}/${bits}`) : ipaddr.IPv6.networkAddressFromCIDR(`${address}/${bits}`);
  // An IPv4-mapped range (::ffff:198.51.100.0/120) is stored as the IPv4 range it is: clients
  // reaching the gateway over IPv4 are matched as IPv4 addresses, as single mapped addresses are.
  if (network instanceof ipaddr.IPv6 && network.isIPv4MappedAddress() && Number(bits) >= 96) return { value: `${network.toIPv4Address().toString()}/${Number(bits) - 96}` };
  return { value: `${network.toString()}/${Number(bits)}` };
}

function clip(s: string): string {
  const t = s.trim();
  return t.length > 80 ? `${t.slice(0, 80)}…` : t;
}

function entries(kind: string, plural: string, normalize: (s: string) => { value: string } | { error: string }) {
  return z
    .array(z.string({ error: `each ${kind} must be a string` }).max(300, `an ${kind} is at most 300 characters`), { error: `${plural} must be a list` })
    .transform((list, ctx) => {
      const out: string[] = [];
      for (const raw of list) {
        if (raw.trim() === "") continue;
        const r = normalize(raw);
        if ("error" in r) {
          ctx.addIssue({ code: "custom", message: r.error });
          return z.NEVER;
        }
        if (!out.includes(r.value)) out.push(r.value);
      }
      if (out.length > MAX_ALLOWLIST_ENTRIES) {
        ctx.addIssue({ code: "custom", message: `A key allows at most ${MAX_ALLOWLIST_ENTRIES} ${plural}; ${out.length} were given.` });
        return z.NEVER;
      }
      return out;
    });
}

/** A key's allowlists as the console API and the Keys page send them; blank lines are ignored, duplicates kept once. */
export const allowlistSchema = z.object({
  origins: entries("origin", "origins", normalizeOrigin),
  ips: entries("address", "addresses", normalizeAddress),
});
export type AllowlistInput = z.input<typeof allowlistSchema>;

interface OriginRule {
  scheme: string | undefined;
  host: string;
  /** `*.example.com`: `host` is `.example.com` and any host ending with it matches. */
  wildcard: boolean;
  port: string | undefined;
}

/** The default port of a scheme, as URL leaves it out of `port`. */
const DEFAULT_PORT: Record<string, string> = { http: "80", https: "443", ws: "80", wss: "443" };

/**
 * A key's allowlists, compiled once per verification (lib/keys/verifier.ts) and checked on every
 * request by the gateway. An empty list allows everything; with both lists set, a request must
 * pass both.
 */
export class KeyAllowlist {
  private readonly origins: OriginRule[];
  private readonly ranges: [ipaddr.IPv4 | ipaddr.IPv6, number][];

  /** Undefined when neither list has entries (nothing to check). */
  static compile(origins: readonly string[], ips: readonly string[]): KeyAllowlist | undefined {
    return origins.length === 0 && ips.length === 0 ? undefined : new KeyAllowlist(origins, ips);
  }

  private constructor(origins: readonly string[], ips: readonly string[]) {
    this.origins = origins.map((o) => {
      const s = SCHEME.exec(o);
      const rest = s ? o.slice(s[0].length) : o;
      const wildcard = rest.startsWith("*.");
      const hostPort = wildcard ? rest.slice(1) : rest;
      const colon = hostPort.lastIndexOf(":");
      const hasPort = colon !== -1 && !hostPort.endsWith("]") && /^\d+$/.test(hostPort.slice(colon + 1));
      return { scheme: s?.[1], wildcard, host: hasPort ? hostPort.slice(0, colon) : hostPort, port: hasPort ? hostPort.slice(colon + 1) : undefined };
    });
    this.ranges = ips.map((entry) => (entry.includes("/") ? ipaddr.parseCIDR(entry) : ((a) => [a, a.kind() === "ipv4" ? 32 : 128] as [ipaddr.IPv4 | ipaddr.IPv6, number])(ipaddr.parse(entry))));
  }

  /**
   * Why the request is refused, or undefined when the allowlists let it through. `origin` is the
   * Origin header; `clientIp` gives the client's address (through the trusted proxy hops), asked
   * for only when addresses are listed.
   */
  refusal(origin: string | string[] | undefined, clientIp: () => string): string | undefined {
    if (this.origins.length > 0) {
      const value = Array.isArray(origin) ? origin[0] : origin;
      if (value === undefined || value === "") {
        return "This key accepts requests only from the origins in its allowlist, and the request has no Origin header.";
      }
      if (!this.originAllowed(value)) return `The origin ${clip(value)} is not in this key's allowlist.`;
    }
    if (this.ranges.length > 0) {
      const ip = clientIp();
      if (!this.addressAllowed(ip)) return `The address ${clip(ip)} is not in this key's allowlist.`;
    }
    return undefined;
  }

  private originAllowed(origin: string): boolean {
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      return false;
    }
    const scheme = url.protocol.slice(0, -1);
    const host = url.hostname;
    const port = url.port || DEFAULT_PORT[scheme] || "";
    return this.origins.some(
      (r) => (r.scheme === undefined || r.scheme === scheme) && (r.port === undefined || r.port === port) && (r.wildcard ? host.endsWith(r.host) : host === r.host),
    );
  }

  private addressAllowed(ip: string): boolean {
    if (!ipaddr.isValid(ip)) return false;
    const address = ipaddr.process(ip);
    return this.ranges.some(([range, bits]) => range.kind() === address.kind() && address.match(range, bits));
  }
}
