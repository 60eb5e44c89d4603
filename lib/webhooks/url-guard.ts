/**
 * Where webhook deliveries may go. A webhook URL makes this server send requests on a user's
 * behalf, so outside a local run it must be https and must not reach the server's own machine or
 * network: every address its host resolves to has to be a global unicast address (not private,
 * loopback, link-local, unique-local, multicast, unspecified, carrier-grade NAT, or another
 * reserved range). Checked when a URL is saved and again before each delivery, against the address
 * the connection will actually use (a name can resolve elsewhere by then: DNS rebinding).
 * WEBHOOK_ALLOW_PRIVATE_URLS and WEBHOOK_HTTPS_ONLY (lib/env.ts) relax or tighten this.
 */
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { promisify } from "node:util";
import ipaddr from "ipaddr.js";
import { getEnv } from "@/lib/env";
import { AppError } from "@/lib/errors";

export interface UrlPolicy {
  httpsOnly: boolean;
  allowPrivate: boolean;
  /** This service's own origin: its test inboxes (`<origin>/v1/inbox/…`) are always allowed. */
  publicUrl: string;
}

export function urlPolicy(): UrlPolicy {
  const env = getEnv();
  return { httpsOnly: env.WEBHOOK_HTTPS_ONLY, allowPrivate: env.WEBHOOK_ALLOW_PRIVATE_URLS, publicUrl: env.PUBLIC_URL };
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

/** The range of a global unicast address is "unicast"; anything else names why it is refused. */
function rangeOf(address: string): string {
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === "ipv6" && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  return parsed.range();
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
      const range = rangeOf(a.address);
      if (range !== "unicast") {
        throw new UnsafeUrlError(`resolves to ${a.address}, a ${range} address, which webhooks may not reach on this server (${ALLOW_HINT})`);
      }
    }
  }
  const first = addresses[0]!;
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
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
