import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db/client";
import { createAdditionalKey, listKeys, revokeKeyForUser, setKeyAllowlist } from "@/lib/keys/service";
import { allowlistSchema } from "@/lib/keys/schema";
import { createTestProject, startTestGateway, type TestGateway } from "@/lib/testing/harness";

// One trusted proxy hop: the client is the last X-Forwarded-For entry; earlier ones were written
// by the client itself and never count. Without the header, the client is the socket's peer.
let gw: TestGateway;
let owner: Awaited<ReturnType<typeof createTestProject>>;

beforeAll(async () => {
  gw = await startTestGateway({ trustedProxyHops: 1 });
  // Business: every test makes several rounds of calls on all interfaces within a second or two,
  // more CU per second than smaller plans allow.
  owner = await createTestProject("Allowlists", "BUSINESS");
}, 120_000);
afterAll(async () => gw.stop());

const SEARCH = encodeURIComponent("tx.height > 0");

/** One call on each public interface, all answered without an upstream node when allowed. */
const INTERFACES: Record<string, (key: string, headers: Record<string, string>) => Promise<Response>> = {
  rpc: (key, headers) => fetch(`${gw.url}/rpc/babylon-mainnet/tx_search?query=${SEARCH}`, { headers: { "X-API-KEY": key, ...headers } }),
  cometbft: (key, headers) =>
    fetch(`${gw.url}/cometbft/babylon-mainnet/${key}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...headers },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tx_search", params: { query: "tx.height > 0" } }),
    }),
  node: (key, headers) =>
    fetch(`${gw.url}/node/ethereum-mainnet/${key}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...headers },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
    }),
  aptos: (key, headers) => fetch(`${gw.url}/aptos/mainnet/v1/transactions/by_version/abc`, { headers: { Authorization: `Bearer ${key}`, ...headers } }),
  v1: (key, headers) => fetch(`${gw.url}/v1/ethereum/mainnet/webhooks`, { headers: { "X-API-KEY": key, ...headers } }),
};

async function callAll(key: string, headers: Record<string, string> = {}) {
  const out: Record<string, { status: number; body: unknown }> = {};
  for (const [name, call] of Object.entries(INTERFACES)) {
    const res = await call(key, headers);
    const text = await res.text();
    out[name] = { status: res.status, body: text ? (JSON.parse(text) as unknown) : undefined };
  }
  return out;
}

/** What each interface answers when the key may be used (aptos: the fullnode-style 400 for a bad version). */
const ALLOWED = { rpc: 200, cometbft: 200, node: 200, aptos: 400, v1: 200 };

function expectAllowed(answers: Awaited<ReturnType<typeof callAll>>) {
  expect(Object.fromEntries(Object.entries(answers).map(([k, v]) => [k, v.status]))).toEqual(ALLOWED);
}

function expectRefused(answers: Awaited<ReturnType<typeof callAll>>, message: string) {
  for (const name of Object.keys(INTERFACES)) expect(answers[name], name).toEqual({ status: 403, body: { code: "PERMISSION_DENIED", message } });
}

async function allow(keyId: string, lists: { origins?: string[]; ips?: string[] }) {
  await setKeyAllowlist(owner.userId, owner.projectId, keyId, allowlistSchema.parse({ origins: lists.origins ?? [], ips: lists.ips ?? [] }));
}

describe("origin allowlists", () => {
  it("lets listed origins through on every interface and refuses others with 403 naming the origin", async () => {
    const key = await createAdditionalKey(owner.userId, owner.projectId, "Web app");
    expectAllowed(await callAll(key.apiKey, { Origin: "https://evil.example" }));

    await allow(key.id, { origins: ["https://app.example.com", "*.example.org"] });
    expectAllowed(await callAll(key.apiKey, { Origin: "https://app.example.com" }));
    expectAllowed(await callAll(key.apiKey, { Origin: "https://a.b.example.org" }));
    expectRefused(await callAll(key.apiKey, { Origin: "https://evil.example" }), "The origin https://evil.example is not in this key's allowlist.");
    expectRefused(await callAll(key.apiKey, { Origin: "http://app.example.com" }), "The origin http://app.example.com is not in this key's allowlist.");
    expectRefused(await callAll(key.apiKey, { Origin: "https://example.org" }), "The origin https://example.org is not in this key's allowlist.");
    expectRefused(await callAll(key.apiKey), "This key accepts requests only from the origins in its allowlist, and the request has no Origin header.");

    // Another key of the same project is not restricted.
    expectAllowed(await callAll(owner.apiKey, { Origin: "https://evil.example" }));

    await allow(key.id, {});
    expectAllowed(await callAll(key.apiKey, { Origin: "https://evil.example" }));
  });
});

describe("address allowlists", () => {
  it("matches single addresses and IPv4/IPv6 ranges against the client behind one trusted proxy", async () => {
    const key = await createAdditionalKey(owner.userId, owner.projectId, "Servers");
    await allow(key.id, { ips: ["198.51.100.0/24", "2001:db8::/32", "203.0.113.7"] });

    expectAllowed(await callAll(key.apiKey, { "X-Forwarded-For": "198.51.100.20" }));
    expectAllowed(await callAll(key.apiKey, { "X-Forwarded-For": "203.0.113.7" }));
    expectAllowed(await callAll(key.apiKey, { "X-Forwarded-For": "2001:db8:1::9" }));
    // The proxy appends the address it saw; what the client wrote before it is ignored.
    expectAllowed(await callAll(key.apiKey, { "X-Forwarded-For": "192.0.2.1, 198.51.100.20" }));
    expectRefused(await callAll(key.apiKey, { "X-Forwarded-For": "198.51.100.20, 192.0.2.1" }), "The address 192.0.2.1 is not in this key's allowlist.");
    expectRefused(await callAll(key.apiKey, { "X-Forwarded-For": "2001:db9::1" }), "The address 2001:db9::1 is not in this key's allowlist.");
    expectRefused(await callAll(key.apiKey, { "X-Forwarded-For": "203.0.113.8" }), "The address 203.0.113.8 is not in this key's allowlist.");
    // No proxy header: the socket's peer.
    expectRefused(await callAll(key.apiKey), "The address 127.0.0.1 is not in this key's allowlist.");

    await allow(key.id, { ips: ["127.0.0.0/8"] });
    expectAllowed(await callAll(key.apiKey));
  });

  it("needs both lists to pass when both are set", async () => {
    const key = await createAdditionalKey(owner.userId, owner.projectId, "Both");
    await allow(key.id, { origins: ["app.example.com"], ips: ["198.51.100.0/24"] });
    expectAllowed(await callAll(key.apiKey, { Origin: "https://app.example.com", "X-Forwarded-For": "198.51.100.1" }));
    expectRefused(await callAll(key.apiKey, { Origin: "https://app.example.com", "X-Forwarded-For": "192.0.2.1" }), "The address 192.0.2.1 is not in this key's allowlist.");
    expectRefused(await callAll(key.apiKey, { Origin: "https://other.example.com", "X-Forwarded-For": "198.51.100.1" }), "The origin https://other.example.com is not in this key's allowlist.");
    await revokeKeyForUser(owner.userId, owner.projectId, key.id);
  });
});

describe("revoked keys and usage", () => {
  it("refuses a revoked key at once with 401, counts refused calls as 4xx, and records when each key was last used", async () => {
    const p = await createTestProject("Revoke", "DEVELOPER");
    const key = await createAdditionalKey(p.userId, p.projectId, "Temporary");
    expectAllowed(await callAll(key.apiKey));
    await setKeyAllowlist(p.userId, p.projectId, key.id, { origins: ["app.example.com"], ips: [] });
    expectRefused(await callAll(key.apiKey, { Origin: "https://evil.example" }), "The origin https://evil.example is not in this key's allowlist.");

    await revokeKeyForUser(p.userId, p.projectId, key.id);
    const answers = await callAll(key.apiKey, { Origin: "https://app.example.com" });
    for (const name of Object.keys(INTERFACES)) expect(answers[name], name).toEqual({ status: 401, body: { code: "AUTHENTICATION_FAILED", message: "The API key has been revoked." } });

    await gw.meter.flush();
    const rejected = await db().usageBucket.findMany({ where: { projectId: p.projectId, keyId: key.id, endpoint: "rejected" } });
    expect(rejected.map((r) => [r.api, r.status, r.requests, r.errors, Number(r.cu)]).sort()).toEqual(
      ["aptos", "cometbft", "node", "rpc", "v1"].map((api) => [api, "4xx", 1, 1, 0]),
    );
    // The refused calls are in the project's request log, under the key, with what was answered;
    // the calls with a revoked key belong to no project's log.
    await gw.requestLog.flush();
    const logged = await db().requestLog.findMany({ where: { projectId: p.projectId, status: 403 }, orderBy: { api: "asc" } });
    const refusal = JSON.stringify({ code: "PERMISSION_DENIED", message: "The origin https://evil.example is not in this key's allowlist." });
    expect(logged.map((r) => ({ api: r.api, keyId: r.keyId, method: r.method, status: r.status, statusClass: r.statusClass, cu: r.cu, result: r.result }))).toEqual(
      ["aptos", "cometbft", "node", "rpc", "v1"].map((api) => ({ api, keyId: key.id, method: "rejected", status: 403, statusClass: "4xx", cu: 0, result: refusal })),
    );
    const row = await db().apiKey.findUniqueOrThrow({ where: { id: key.id } });
    expect(row.lastUsedAt).toEqual(expect.any(Date));
    expect(Math.abs(row.lastUsedAt!.getTime() - Date.now())).toBeLessThan(60_000);
    // The default key was never used.
    expect((await listKeys(p.userId, p.projectId))[0]).toMatchObject({ name: "Default key", lastUsedAt: null });
  });
});
