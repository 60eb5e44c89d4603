import { mkdtempSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseEnv } from "@/lib/env";
import { checkWebhookUrl, describeUrlPolicy, pinnedLookup, resolveDeliveryTarget, UnsafeUrlError, type UrlPolicy } from "./url-guard";

const production: UrlPolicy = { httpsOnly: true, allowPrivate: false, publicUrl: "https://nodes.example.com" };
const local: UrlPolicy = { httpsOnly: false, allowPrivate: true, publicUrl: "http://localhost:3000" };

/** DNS answers for names on the internet (this machine has no resolver for them). */
const dns = (answers: Record<string, Array<{ address: string; family: number }>>) => async (host: string) => {
  const a = answers[host];
  if (!a) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
  return a;
};

const HINT = "set WEBHOOK_ALLOW_PRIVATE_URLS=on on the server to allow receivers on private networks";

const refusal = async (url: string, policy = production, resolve = dns({})) => {
  try {
    await resolveDeliveryTarget(url, policy, resolve);
  } catch (e) {
    expect(e).toBeInstanceOf(UnsafeUrlError);
    return (e as Error).message;
  }
  throw new Error(`${url} was accepted`);
};

describe("in production", () => {
  it("refuses anything but https", async () => {
    expect(await refusal("http://receiver.example/h")).toBe("must be an https:// URL on this server");
    expect(await refusal("ftp://receiver.example/h")).toBe("must be an http:// or https:// URL");
    expect(await refusal("not a url")).toBe("is not an absolute URL");
  });

  // Each host → the address it is (as the refusal prints it) and why it is refused, or null when
  // allowed. Teredo addresses carry the client's IPv4 address with every bit inverted (127.0.0.1 → 80ff:fffe).
  const table: Array<[host: string, address: string, why: string | null]> = [
    ["127.0.0.1", "127.0.0.1", "a loopback"],
    // IPv4 in the other forms browsers accept: the URL parser writes them out before the check.
    ["2130706433", "127.0.0.1", "a loopback"],
    ["0177.0.0.1", "127.0.0.1", "a loopback"],
    ["0x7f.1", "127.0.0.1", "a loopback"],
    ["0x7f000001", "127.0.0.1", "a loopback"],
    ["127.1", "127.0.0.1", "a loopback"],
    ["0", "0.0.0.0", "an unspecified"],
    ["10.0.0.8", "10.0.0.8", "a private"],
    ["172.16.5.4", "172.16.5.4", "a private"],
    ["192.168.1.1", "192.168.1.1", "a private"],
    ["169.254.169.254", "169.254.169.254", "a link-local"],
    ["100.64.0.1", "100.64.0.1", "a carrier-grade NAT"],
    ["224.0.0.1", "224.0.0.1", "a multicast"],
    ["255.255.255.255", "255.255.255.255", "a broadcast"],
    ["192.0.2.1", "192.0.2.1", "a reserved"],
    ["93.184.215.14", "93.184.215.14", null],
    ["[::1]", "::1", "a loopback"],
    ["[::]", "::", "an unspecified"],
    ["[fe80::1]", "fe80::1", "a link-local"],
    ["[fd00::1]", "fd00::1", "a unique-local"],
    ["[ff02::1]", "ff02::1", "a multicast"],
    ["[fec0::1]", "fec0::1", "a deprecated site-local"],
    ["[100::1]", "100::1", "a discard-only"],
    ["[2001:db8::1]", "2001:db8::1", "a reserved"],
    ["[2606:2800:21f:cb07:6820:80da:af6b:8b2c]", "2606:2800:21f:cb07:6820:80da:af6b:8b2c", null],
    // IPv4-compatible (::/96, deprecated): refused whatever IPv4 address it names.
    ["[::127.0.0.1]", "::7f00:1", "a deprecated IPv4-compatible"],
    ["[::7f00:1]", "::7f00:1", "a deprecated IPv4-compatible"],
    ["[::93.184.215.14]", "::5db8:d70e", "a deprecated IPv4-compatible"],
    // The other forms are judged by the IPv4 address they carry.
    ["[::ffff:127.0.0.1]", "::ffff:7f00:1", "an IPv4-mapped address of 127.0.0.1, a loopback"],
    ["[::ffff:10.0.0.1]", "::ffff:a00:1", "an IPv4-mapped address of 10.0.0.1, a private"],
    ["[::ffff:93.184.215.14]", "::ffff:5db8:d70e", null],
    ["[::ffff:0:127.0.0.1]", "::ffff:0:7f00:1", "an IPv4-translated address of 127.0.0.1, a loopback"],
    ["[::ffff:0:93.184.215.14]", "::ffff:0:5db8:d70e", null],
    ["[64:ff9b::a00:1]", "64:ff9b::a00:1", "a NAT64 address of 10.0.0.1, a private"],
    ["[64:ff9b::127.0.0.1]", "64:ff9b::7f00:1", "a NAT64 address of 127.0.0.1, a loopback"],
    ["[64:ff9b::93.184.215.14]", "64:ff9b::5db8:d70e", null],
    // The local-use NAT64 prefix: where its IPv4 address sits is the network's choice, so it cannot be judged.
    ["[64:ff9b:1::5db8:d70e]", "64:ff9b:1::5db8:d70e", "a local-use NAT64"],
    ["[2002:7f00:1::1]", "2002:7f00:1::1", "a 6to4 address of 127.0.0.1, a loopback"],
    ["[2002:a9fe:a9fe::1]", "2002:a9fe:a9fe::1", "a 6to4 address of 169.254.169.254, a link-local"],
    ["[2002:5db8:d70e::1]", "2002:5db8:d70e::1", null],
    ["[2001:0:4136:e378:8000:63bf:80ff:fffe]", "2001:0:4136:e378:8000:63bf:80ff:fffe", "a Teredo address of 127.0.0.1, a loopback"],
    ["[2001:0:4136:e378:8000:63bf:f5ff:fffe]", "2001:0:4136:e378:8000:63bf:f5ff:fffe", "a Teredo address of 10.0.0.1, a private"],
    ["[2001:0:a00:1:8000:63bf:a247:28f1]", "2001:0:a00:1:8000:63bf:a247:28f1", "a Teredo address of 10.0.0.1, a private"],
    ["[2001:0:4136:e378:8000:63bf:a247:28f1]", "2001:0:4136:e378:8000:63bf:a247:28f1", null],
    ["[::5efe:127.0.0.1]", "::5efe:7f00:1", "an ISATAP address of 127.0.0.1, a loopback"],
    ["[2600::5efe:10.0.0.1]", "2600::5efe:a00:1", "an ISATAP address of 10.0.0.1, a private"],
    ["[2600::200:5efe:169.254.169.254]", "2600::200:5efe:a9fe:a9fe", "an ISATAP address of 169.254.169.254, a link-local"],
    ["[2600::200:5efe:93.184.215.14]", "2600::200:5efe:5db8:d70e", null],
    // On a prefix that is not global, the prefix decides.
    ["[fe80::5efe:93.184.215.14]", "fe80::5efe:5db8:d70e", "a link-local"],
  ];

  it("refuses addresses of this machine and private networks, in every form that reaches them (table)", async () => {
    for (const [host, address, why] of table) {
      const url = `https://${host}/h`;
      if (why === null) expect((await resolveDeliveryTarget(url, production)).address, url).toBe(address);
      else expect(await refusal(url), url).toBe(`resolves to ${address}, ${why} address, which webhooks may not reach on this server (${HINT})`);
    }
    // The machine's own resolver: localhost is loopback.
    await expect(resolveDeliveryTarget("https://localhost:8443/h", production)).rejects.toThrow(/^resolves to (127\.0\.0\.1|::1), a loopback address/);
  });

  it("refuses a name resolving to any such form the same way", async () => {
    const refused = table.filter(([, , why]) => why !== null);
    const resolve = dns(Object.fromEntries(refused.map(([, address], i) => [`n${i}.example`, [{ address, family: address.includes(":") ? 6 : 4 }]])));
    for (const [i, [, address, why]] of refused.entries()) {
      expect(await refusal(`https://n${i}.example/h`, production, resolve)).toBe(`resolves to ${address}, ${why} address, which webhooks may not reach on this server (${HINT})`);
    }
    const allowed = dns({ "nat64.example": [{ address: "64:ff9b::5db8:d70e", family: 6 }] });
    expect(await resolveDeliveryTarget("https://nat64.example/h", production, allowed)).toMatchObject({ address: "64:ff9b::5db8:d70e", family: 6 });
  });

  it("refuses a name when any of its addresses is private, and a name that does not resolve", async () => {
    const resolve = dns({ "mixed.example": [{ address: "93.184.215.14", family: 4 }, { address: "10.0.0.1", family: 4 }] });
    expect(await refusal("https://mixed.example/h", production, resolve)).toContain("resolves to 10.0.0.1, a private address");
    expect(await refusal("https://nowhere.example/h", production, resolve)).toBe("names a host that does not resolve (nowhere.example)");
    const flaky = async () => {
      throw Object.assign(new Error("timeout"), { code: "EAI_AGAIN" });
    };
    expect(await refusal("https://flaky.example/h", production, flaky)).toBe("names a host that could not be resolved now (flaky.example: EAI_AGAIN)");
  });

  it("answers the address to connect to for a public name, so the connection is pinned to what was checked", async () => {
    const resolve = dns({ "hooks.example": [{ address: "2606:2800:21f:cb07:6820:80da:af6b:8b2c", family: 6 }, { address: "93.184.215.14", family: 4 }] });
    const target = await resolveDeliveryTarget("https://hooks.example:8443/in?x=1", production, resolve);
    expect(target.url.href).toBe("https://hooks.example:8443/in?x=1");
    expect(target).toMatchObject({ address: "2606:2800:21f:cb07:6820:80da:af6b:8b2c", family: 6 });
    expect(await resolveDeliveryTarget("https://93.184.215.14/h", production)).toMatchObject({ address: "93.184.215.14", family: 4 });
  });

  it("allows this service's own test inboxes, whatever their address and scheme", async () => {
    const resolve = dns({ "nodes.example.com": [{ address: "10.0.0.5", family: 4 }] });
    expect(await resolveDeliveryTarget("https://nodes.example.com/v1/inbox/abc", production, resolve)).toMatchObject({ address: "10.0.0.5" });
    const own: UrlPolicy = { ...production, publicUrl: "http://127.0.0.1:3000" };
    expect(await resolveDeliveryTarget("http://127.0.0.1:3000/v1/inbox/abc", own)).toMatchObject({ address: "127.0.0.1" });
    expect(await refusal("http://127.0.0.1:3000/v1/other", own)).toBe("must be an https:// URL on this server");
  });

  it("answers a save-time refusal as 400 INVALID_PARAMETER naming the field", async () => {
    await expect(checkWebhookUrl("https://10.0.0.1/h", "notification.webhookUrl", production)).rejects.toMatchObject({
      code: "INVALID_PARAMETER",
      status: 400,
      message: "notification.webhookUrl resolves to 10.0.0.1, a private address, which webhooks may not reach on this server (set WEBHOOK_ALLOW_PRIVATE_URLS=on on the server to allow receivers on private networks).",
    });
  });
});

describe("in a local run", () => {
  it("allows http and private addresses, and saves URLs without resolving them", async () => {
    expect(await resolveDeliveryTarget("http://127.0.0.1:8080/h", local)).toMatchObject({ address: "127.0.0.1", family: 4 });
    const never = async () => {
      throw new Error("resolved");
    };
    await expect(checkWebhookUrl("http://receiver.invalid/h", "notification.webhookUrl", local, never)).resolves.toBeUndefined();
    await expect(checkWebhookUrl("ftp://x/h", "notification.webhookUrl", local)).rejects.toMatchObject({ message: "notification.webhookUrl must be an http:// or https:// URL." });
  });
});

describe("the policy as the start-up log says it", () => {
  it("names what allows private addresses, and that the local default lasts until a request comes through a proxy", () => {
    const env = (extra: Record<string, string>) => parseEnv({ NODE_ENV: "production", DATA_DIR: mkdtempSync(path.join(os.tmpdir(), "blockgate-url-policy-")), ...extra });
    expect(describeUrlPolicy(env({}))).toBe("http or https URLs, private and loopback addresses allowed (local default, until a request comes through a reverse proxy; set WEBHOOK_ALLOW_PRIVATE_URLS to choose)");
    expect(describeUrlPolicy(env({ HOST: "0.0.0.0", WEBHOOK_ALLOW_PRIVATE_URLS: "on" }))).toBe("https URLs, private and loopback addresses allowed (WEBHOOK_ALLOW_PRIVATE_URLS=on)");
    expect(describeUrlPolicy(env({ HOST: "0.0.0.0" }))).toBe("https URLs, public addresses only");
  });
});

describe("pinnedLookup", () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer((req, res) => res.end(`host ${req.headers.host}`));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it("connects to the pinned address while the request keeps the URL's host name", async () => {
    const target = { url: new URL(`http://receiver.invalid:${port}/h`), address: "127.0.0.1", family: 4 as const };
    const body = await new Promise<string>((resolve, reject) => {
      const req = request(target.url, { method: "POST", lookup: pinnedLookup(target) as never }, (res) => {
        let text = "";
        res.on("data", (c: Buffer) => (text += c.toString()));
        res.on("end", () => resolve(text));
      });
      req.on("error", reject);
      req.end("{}");
    });
    expect(body).toBe(`host receiver.invalid:${port}`);
  });
});
