/**
 * Where webhook deliveries may go. A webhook URL makes this server send requests on a user's
 * behalf, so outside a local run it must be https and must not reach the server's own machine or
 * network: every address its host resolves to has to be a global unicast address (not private,
 * loopback, link-local, unique-local, multicast, unspecified, carrier-grade NAT, or another
 * reserved range). An IPv6 address that carries an IPv4 address (IPv4-mapped or -translated,
 * NAT64, 6to4, Teredo, ISATAP) must carry global ones; deprecated forms (IPv4-compatible,
 * site-local) are refused. IPv4 hosts written in decimal, octal, hex or short form reach here
 * already written out by the URL parser (WHATWG), so `http://2130706433/` is 127.0.0.1. Checked
 * when a URL is saved and again before each delivery, against the address the connection will
 * actually use (a name can resolve elsewhere by then: DNS rebinding).
 * WEBHOOK_ALLOW_PRIVATE_URLS and WEBHOOK_HTTPS_ONLY (lib/env.ts) relax or tighten this.
 */
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { isIPv6 } from "node:net";
import { promisify } from "node:util";
import ipaddr from "ipaddr.js";
import { getEnv, webhookPrivateUrlsAllowed, type Env } from "@/lib/env";
import { AppError } from "@/lib/errors";

export interface UrlPolicy {
  httpsOnly: boolean;
  allowPrivate: boolean;
  /** This service's own origin: its test inboxes (`<origin>/v1/inbox/…`) are always allowed. */
  publicUrl: string;
}

export function urlPolicy(): UrlPolicy {
  const env = getEnv();
  return { httpsOnly: env.WEBHOOK_HTTPS_ONLY, allowPrivate: webhookPrivateUrlsAllowed(env), publicUrl: env.PUBLIC_URL };
}

/** What allows private and loopback webhook URLs now: the local default or the operator's setting; undefined when they are refused. */
export function privateUrlsAllowedBy(env: Env = getEnv()): "local default" | "WEBHOOK_ALLOW_PRIVATE_URLS" | undefined {
  if (!webhookPrivateUrlsAllowed(env)) return undefined;
  return env.webhookPrivateUrlsByDefault ? "local default" : "WEBHOOK_ALLOW_PRIVATE_URLS";
}

/** The webhook URL policy in words, for the start-up log. */
export function describeUrlPolicy(env: Env = getEnv()): string {
  const scheme = env.WEBHOOK_HTTPS_ONLY ? "https URLs" : "http or https URLs";
  const by = privateUrlsAllowedBy(env);
  if (by === undefined) return `${scheme}, public addresses only`;
  if (by === "WEBHOOK_ALLOW_PRIVATE_URLS") return `${scheme}, private and loopback addresses allowed (WEBHOOK_ALLOW_PRIVATE_URLS=on)`;
  return `${scheme}, private and loopback addresses allowed (local default, until a request comes through a reverse proxy; set WEBHOOK_ALLOW_PRIVATE_URLS to choose)`;
}

/** Where a delivery connects: the URL, and the address to connect to instead of resolving again. */
export interface DeliveryTarget {
  url: URL;
  address: string;
  family: 4 | 6;
}

/** A URL deliveries may not use; the message says why, for the history and for API answers. */
export class UnsafeUrlError extends Error {
  override name = "UnsafeUrlError";
}

type Resolver = (hostname: string) => Promise<LookupAddress[]>;

const lookupAll = promisify(dnsLookup);
const systemResolver: Resolver = (hostname) => lookupAll(hostname, { all: true, verbatim: true });

/** What a refusal calls an address of each of ipaddr.js's ranges (`resolves to …, <this> address`). */
const RANGE_WORDS: Readonly<Record<string, string>> = {
  unspecified: "an unspecified",
  broadcast: "a broadcast",
  multicast: "a multicast",
  linkLocal: "a link-local",
  loopback: "a loopback",
  carrierGradeNat: "a carrier-grade NAT",
  private: "a private",
  reserved: "a reserved",
  uniqueLocal: "a unique-local",
  deprecatedSiteLocal: "a deprecated site-local",
  discard: "a discard-only",
  benchmarking: "a benchmarking",
  as112: "an AS112",
  as112v6: "an AS112",
  amt: "an AMT",
  deprecatedOrchid: "a deprecated ORCHID",
  orchid2: "an ORCHIDv2",
  droneRemoteIdProtocolEntityTags: "a DRIP entity tag",
  segmentRouting: "a segment routing",
};
const rangeWords = (range: string) => RANGE_WORDS[range] ?? `a ${range}`;

/** NAT64's well-known prefix (RFC 6052): the IPv4 address is the last 32 bits. */
const NAT64 = ipaddr.parseCIDR("64:ff9b::/96");
/** RFC 8215's local-use NAT64 prefix: the operator chooses where in it the IPv4 address sits, so which one it reaches cannot be told. */
const LOCAL_NAT64 = ipaddr.parseCIDR("64:ff9b:1::/48");
/** IPv4-compatible addresses (RFC 4291, deprecated): nothing should route them, and some stacks still send them over IPv4. */
const IPV4_COMPATIBLE = ipaddr.parseCIDR("::/96");

const ipv4At = (parts: number[], i: number) => new ipaddr.IPv4([parts[i]! >> 8, parts[i]! & 0xff, parts[i + 1]! >> 8, parts[i + 1]! & 0xff]);

/**
 * The IPv4 addresses an IPv6 address of a transition form reaches (a connection to it ends up at
 * them, through the host's own stack or a translator or tunnel on the way), with the form's name;
 * undefined for an address of no such form.
 */
function embeddedIPv4(v6: ipaddr.IPv6, range: string): { form: string; addresses: ipaddr.IPv4[] } | undefined {
  const p = v6.parts;
  switch (range) {
    case "ipv4Mapped":
      return { form: "an IPv4-mapped", addresses: [ipv4At(p, 6)] };
    case "rfc6145":
      return { form: "an IPv4-translated", addresses: [ipv4At(p, 6)] };
    case "rfc6052":
      return v6.match(NAT64) ? { form: "a NAT64", addresses: [ipv4At(p, 6)] } : undefined;
    case "6to4":
      return { form: "a 6to4", addresses: [ipv4At(p, 1)] };
    case "teredo": {
      // 2001:0:<server IPv4>:<flags>:<port>:<client IPv4>, the client's address and port with every bit inverted.
      const client = ipv4At(p.map((g) => ~g & 0xffff), 6);
      return { form: "a Teredo", addresses: [ipv4At(p, 2), client] };
    }
    default:
      // An ISATAP interface identifier (RFC 5214): [00|02]00:5efe:<IPv4> in the low 64 bits, on any
      // global prefix (on another, the prefix's own range refuses it).
      return range === "unicast" && (p[4]! & 0xfcff) === 0 && p[5] === 0x5efe ? { form: "an ISATAP", addresses: [ipv4At(p, 6)] } : undefined;
  }
}

/**
 * Why webhooks may not reach an address, as the refusal says it (`resolves to <address>, <why>
 * address`), or undefined for a global unicast one. An IPv6 address that stands for IPv4 addresses
 * is judged by them; deprecated forms, and one whose IPv4 address cannot be told, are refused.
 */
function refusedRange(address: string): string | undefined {
  const parsed = ipaddr.parse(address);
  const range = parsed.range();
  if (parsed.kind() === "ipv4") return range === "unicast" ? undefined : rangeWords(range);
  const v6 = parsed as ipaddr.IPv6;
  if (range === "unicast" && v6.match(IPV4_COMPATIBLE)) return "a deprecated IPv4-compatible";
  if (range === "rfc6052" && v6.match(LOCAL_NAT64)) return "a local-use NAT64";
  const embedded = embeddedIPv4(v6, range);
  if (!embedded) return range === "unicast" ? undefined : rangeWords(range);
  for (const v4 of embedded.addresses) {
    const inner = v4.range();
    if (inner !== "unicast") return `${embedded.form} address of ${v4.toString()}, ${rangeWords(inner)}`;
  }
  return undefined;
}

function isOwnInbox(url: URL, policy: UrlPolicy): boolean {
  return url.origin === new URL(policy.publicUrl).origin && url.pathname.startsWith("/v1/inbox/");
}

const ALLOW_HINT = "set WEBHOOK_ALLOW_PRIVATE_URLS=on on the server to allow receivers on private networks";

function parseChecked(raw: string, policy: UrlPolicy): { url: URL; own: boolean } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UnsafeUrlError("is not an absolute URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new UnsafeUrlError("must be an http:// or https:// URL");
  const own = isOwnInbox(url, policy);
  if (policy.httpsOnly && url.protocol !== "https:" && !own) throw new UnsafeUrlError("must be an https:// URL on this server");
  return { url, own };
}

/**
 * Checks a webhook URL and resolves its host: the address a delivery must connect to (pin it, so
 * the connection goes where the check looked). Throws UnsafeUrlError with the reason.
 */
export async function resolveDeliveryTarget(raw: string, policy: UrlPolicy = urlPolicy(), resolve: Resolver = systemResolver): Promise<DeliveryTarget> {
  const { url, own } = parseChecked(raw, policy);
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  let addresses: LookupAddress[];
  if (ipaddr.isValid(host)) {
    addresses = [{ address: host, family: ipaddr.parse(host).kind() === "ipv6" ? 6 : 4 }];
  } else {
    try {
      addresses = await resolve(host);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      throw new UnsafeUrlError(code === "ENOTFOUND" || code === "ENODATA" ? `names a host that does not resolve (${host})` : `names a host that could not be resolved now (${host}: ${code ?? "lookup failed"})`);
    }
    if (addresses.length === 0) throw new UnsafeUrlError(`names a host that does not resolve (${host})`);
  }
  if (!policy.allowPrivate && !own) {
    for (const a of addresses) {
      const why = refusedRange(a.address);
      if (why !== undefined) throw new UnsafeUrlError(`resolves to ${a.address}, ${why} address, which webhooks may not reach on this server (${ALLOW_HINT})`);
    }
  }
  const first = addresses[0]!;
  return { url, address: first.address, family: isIPv6(first.address) ? 6 : 4 };
}

/**
 * The check when a URL is saved: the same as at delivery, answered as a 400 naming the field. When
 * private addresses are allowed nothing needs resolving, so an offline machine can save any URL.
 */
export async function checkWebhookUrl(raw: string, field = "notification.webhookUrl", policy: UrlPolicy = urlPolicy(), resolve?: Resolver): Promise<void> {
  try {
    if (policy.allowPrivate) parseChecked(raw, policy);
    else await resolveDeliveryTarget(raw, policy, resolve);
  } catch (e) {
    if (e instanceof UnsafeUrlError) throw new AppError("INVALID_PARAMETER", `${field} ${e.message}.`);
    throw e;
  }
}

/**
 * A `lookup` for node:net / node:tls / undici's `connect` option that answers the pinned address,
 * so the connection cannot resolve the name again. TLS still verifies the certificate against the
 * URL's host name.
 */
export function pinnedLookup(target: DeliveryTarget) {
  return (_hostname: string, options: { all?: boolean } | number | undefined, callback: (...args: unknown[]) => void): void => {
    if (typeof options === "object" && options?.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
}
