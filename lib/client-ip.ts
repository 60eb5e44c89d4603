import type { IncomingMessage } from "node:http";
import { isIP } from "node:net";

/**
 * The request header through which the HTTP server hands the client's address to Next.js (route
 * handlers and server actions cannot see the socket). The server always overwrites it, so a
 * value a client sends under this name never arrives.
 */
export const CLIENT_IP_HEADER = "x-blockgate-client-ip";

/** What clientIp() answers when the header is missing (a request that did not come through lib/server.ts). */
export const UNKNOWN_CLIENT = "unknown";

function plain(address: string): string {
  // A dual-stack socket reports IPv4 peers as IPv4-mapped IPv6 (::ffff:192.0.2.1).
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  return mapped?.[1] ?? address;
}

/**
 * The client's address for a request on our socket. With `trustedProxyHops` proxies in front,
 * each appends the address it received the request from to X-Forwarded-For, so the client is
 * the entry that many places from the end; entries before it were written by the client and are
 * never used. With 0 hops (the default) X-Forwarded-For is ignored.
 */
export function socketClientIp(req: IncomingMessage, trustedProxyHops: number): string {
  const peer = plain(req.socket.remoteAddress ?? UNKNOWN_CLIENT);
  if (trustedProxyHops <= 0) return peer;
  const forwarded = req.headers["x-forwarded-for"];
  const hops = (Array.isArray(forwarded) ? forwarded.join(",") : (forwarded ?? ""))
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  // Fewer entries than trusted hops: the leftmost is the furthest address any trusted proxy saw.
  const entry = hops.length === 0 ? undefined : hops[Math.max(0, hops.length - trustedProxyHops)];
  return entry && isIP(plain(entry)) ? plain(entry) : peer;
}

/** Headers a reverse proxy adds to the requests it forwards. */
const PROXY_HEADERS = ["forwarded", "x-forwarded-for", "x-forwarded-host", "x-real-ip", "via"] as const;

/** The first header of a reverse proxy a request carries (it came through one), or undefined. */
export function proxyHeaderOf(req: IncomingMessage): string | undefined {
  return PROXY_HEADERS.find((name) => req.headers[name] !== undefined);
}

/** The client's address as lib/server.ts recorded it, from a route handler's or server action's headers. */
export function clientIp(headers: Pick<Headers, "get">): string {
  const value = headers.get(CLIENT_IP_HEADER)?.trim();
  return value || UNKNOWN_CLIENT;
}

/** The eight groups of an IPv6 address, without leading zeros ("2001:db8::1" → 2001 db8 0 0 0 0 0 1). */
function ipv6Groups(ip: string): string[] {
  const [head = "", tail = ""] = ip.toLowerCase().split("::", 2);
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  // A trailing dotted quad (::ffff:192.0.2.1) stands for two groups.
  const width = (parts: string[]) => parts.reduce((n, p) => n + (p.includes(".") ? 2 : 1), 0);
  const groups = ip.includes("::") ? [...left, ...Array<string>(8 - width(left) - width(right)).fill("0"), ...right] : left;
  return groups.map((g) => g.replace(/^0+(?=.)/, ""));
}

/**
 * The key a per-client limit counts under: the address itself for IPv4, the /64 network for
 * IPv6 (one subscriber usually holds a whole /64, so counting single addresses would let them
 * rotate through 2^64 of them).
 */
export function clientKey(ip: string): string {
  if (isIP(ip) !== 6) return ip;
  return `${ipv6Groups(ip).slice(0, 4).join(":")}::/64`;
}

/**
 * The block of addresses one party typically holds, for limits over many of its addresses: the
 * /24 of an IPv4 address, the /48 of an IPv6 one (a site's usual assignment).
 */
export function networkKey(ip: string): string {
  if (isIP(ip) === 4) return `${ip.slice(0, ip.lastIndexOf("."))}.0/24`;
  if (isIP(ip) !== 6) return ip;
  return `${ipv6Groups(ip).slice(0, 3).join(":")}::/48`;
}
