import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkWebhookUrl, pinnedLookup, resolveDeliveryTarget, UnsafeUrlError, type UrlPolicy } from "./url-guard";

const production: UrlPolicy = { httpsOnly: true, allowPrivate: false, publicUrl: "https://nodes.example.com" };
const local: UrlPolicy = { httpsOnly: false, allowPrivate: true, publicUrl: "http://localhost:3000" };

/** DNS answers for names on the internet (this machine has no resolver for them). */
const dns = (answers: Record<string, Array<{ address: string; family: number }>>) => async (host: string) => {
  const a = answers[host];
  if (!a) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
  return a;
};

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

  it("refuses addresses of this machine and private networks, literal or resolved, IPv4 and IPv6", async () => {
    const cases: Array<[string, string]> = [
      ["https://127.0.0.1/h", "loopback"],
      ["https://2130706433/h", "loopback"],
      ["https://0x7f.1/h", "loopback"],
      ["https://0.0.0.0/h", "unspecified"],
      ["https://10.0.0.8/h", "private"],
      ["https://172.16.5.4/h", "private"],
      ["https://192.168.1.1/h", "private"],
      ["https://169.254.169.254/latest/meta-data", "linkLocal"],
      ["https://100.64.0.1/h", "carrierGradeNat"],
      ["https://224.0.0.1/h", "multicast"],
      ["https://255.255.255.255/h", "broadcast"],
      ["https://[::1]/h", "loopback"],
      ["https://[::]/h", "unspecified"],
      ["https://[fe80::1]/h", "linkLocal"],
      ["https://[fd00::1]/h", "uniqueLocal"],
      ["https://[ff02::1]/h", "multicast"],
      ["https://[::ffff:127.0.0.1]/h", "loopback"],
      ["https://[::ffff:10.0.0.1]/h", "private"],
      ["https://[64:ff9b::a00:1]/h", "rfc6052"],
    ];
    for (const [url, range] of cases) expect(await refusal(url), url).toMatch(new RegExp(`^resolves to [^ ]+, a ${range} address, which webhooks may not reach on this server \\(set WEBHOOK_ALLOW_PRIVATE_URLS=on`));
    // The machine's own resolver: localhost is loopback.
    await expect(resolveDeliveryTarget("https://localhost:8443/h", production)).rejects.toThrow(/^resolves to (127\.0\.0\.1|::1), a loopback address/);
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
