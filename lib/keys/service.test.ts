import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseBody } from "@/lib/api/route";
import { db, disconnectDb } from "@/lib/db/client";
import { AppError } from "@/lib/errors";
import { connectTestDatabase, createTestProject } from "@/lib/testing/harness";
import { allowlistSchema, renameKeySchema } from "./schema";
import { createAdditionalKey, listKeys, renameKey, resetKeyForUser, revealKey, revokeKeyForUser, setKeyAllowlist } from "./service";
import { services } from "@/lib/services";
import { KeyVerifier } from "./verifier";

let databaseUrl: string;
beforeAll(async () => {
  databaseUrl = await connectTestDatabase();
});
afterAll(async () => disconnectDb());

/** The AppError a call fails with, as { status, code, message }. */
async function failure(p: Promise<unknown>) {
  try {
    await p;
  } catch (e) {
    if (e instanceof AppError) return { status: e.status, code: e.code, message: e.message };
    throw e;
  }
  throw new Error("expected a failure");
}

const json = (body: unknown) => new Request("http://console.test/", { method: "PUT", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });

async function waitFor(check: () => boolean, what: string) {
  const until = Date.now() + 15_000;
  while (Date.now() < until) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("keys per plan", () => {
  it("refuses a second key on the free plan, naming the limit and suggesting an upgrade", async () => {
    const p = await createTestProject();
    expect(await failure(createAdditionalKey(p.userId, p.projectId, "Second"))).toEqual({
      status: 409,
      code: "REJECTED",
      message: "The Starter (free) plan includes one API key. Upgrade the plan to create more keys.",
    });
  });

  it("creates keys up to the plan's limit; a revoked key frees its place", async () => {
    const p = await createTestProject("Plus", "STARTER_PLUS");
    const b = await createAdditionalKey(p.userId, p.projectId, "Backend");
    await createAdditionalKey(p.userId, p.projectId, "Frontend");
    expect(await failure(createAdditionalKey(p.userId, p.projectId, "Fourth"))).toMatchObject({
      code: "REJECTED",
      message: "The Starter Plus plan includes 3 API keys. Upgrade the plan to create more keys.",
    });
    const listed = await listKeys(p.userId, p.projectId);
    expect(listed.map((k) => k.name)).toEqual(["Default key", "Backend", "Frontend"]);
    expect(listed[1]).toEqual({
      id: b.id,
      name: "Backend",
      masked: expect.stringMatching(/^bg_.{4}•{12}$/),
      createdAt: expect.any(Date),
      resetAt: null,
      lastUsedAt: null,
      allowedOrigins: [],
      allowedIps: [],
    });
    await revokeKeyForUser(p.userId, p.projectId, b.id);
    expect((await listKeys(p.userId, p.projectId)).map((k) => k.name)).toEqual(["Default key", "Frontend"]);
    await createAdditionalKey(p.userId, p.projectId, "Fourth");
  });
});

describe("rename, revoke", () => {
  it("renames a key; a bad name is a 400", async () => {
    const p = await createTestProject();
    const [key] = await listKeys(p.userId, p.projectId);
    expect(await renameKey(p.userId, p.projectId, key!.id, "Production")).toMatchObject({ id: key!.id, name: "Production" });
    expect((await listKeys(p.userId, p.projectId))[0]?.name).toBe("Production");
    expect(await failure(parseBody(json({ name: "  " }), renameKeySchema))).toEqual({ status: 400, code: "INVALID_PARAMETER", message: "name: Enter a key name" });
    expect(await failure(parseBody(json({ name: "x".repeat(65) }), renameKeySchema))).toEqual({ status: 400, code: "INVALID_PARAMETER", message: "name: Use at most 64 characters" });
    expect(await failure(parseBody(json({}), renameKeySchema))).toMatchObject({ status: 400, code: "MISSING_REQUIRED_PARAMETER" });
  });

  it("refuses a revoked key at once here and, once notified, in another process; it can no longer be revealed or reset", async () => {
    const p = await createTestProject("Dev", "DEVELOPER");
    const second = await createAdditionalKey(p.userId, p.projectId, "Leaked");
    const other = new KeyVerifier({ cacheTtlMs: 60_000 });
    const listener = other.listen(databaseUrl);
    try {
      await listener.ready;
      expect(await other.verify(second.apiKey)).toMatchObject({ keyId: second.id });
      expect(await services().keyVerifier.verify(second.apiKey)).toMatchObject({ keyId: second.id });
      expect(other.verify(second.apiKey)).toMatchObject({ keyId: second.id });

      await revokeKeyForUser(p.userId, p.projectId, second.id);
      expect(await services().keyVerifier.verify(second.apiKey)).toBe("REVOKED");
      // The other verifier caches for a minute: only the notification can drop its answer.
      await waitFor(() => other.verify(second.apiKey) instanceof Promise, "the revocation to reach the other verifier");
      expect(await other.verify(second.apiKey)).toBe("REVOKED");
      expect(await other.verify(p.apiKey)).toMatchObject({ projectId: p.projectId });
    } finally {
      await listener.stop();
    }
    expect((await db().apiKey.findUniqueOrThrow({ where: { id: second.id } })).revokedAt).toEqual(expect.any(Date));
    expect(await failure(revealKey(p.userId, p.projectId, second.id))).toMatchObject({ status: 404, code: "RESOURCE_NOT_FOUND" });
    expect(await failure(resetKeyForUser(p.userId, p.projectId, second.id))).toMatchObject({ status: 404, code: "RESOURCE_NOT_FOUND" });
    expect(await failure(revokeKeyForUser(p.userId, p.projectId, second.id))).toMatchObject({ status: 404, code: "RESOURCE_NOT_FOUND" });
  });

  it("keeps a project's last key: it can be reset, not revoked", async () => {
    const p = await createTestProject();
    const [key] = await listKeys(p.userId, p.projectId);
    expect(await failure(revokeKeyForUser(p.userId, p.projectId, key!.id))).toEqual({
      status: 409,
      code: "REJECTED",
      message: expect.stringContaining("only key"),
    });
    expect(await services().keyVerifier.verify(p.apiKey)).toMatchObject({ projectId: p.projectId });
  });
});

describe("allowlists", () => {
  it("stores the normalised lists and applies them at once in every verifier", async () => {
    const p = await createTestProject();
    const [key] = await listKeys(p.userId, p.projectId);
    const other = new KeyVerifier({ cacheTtlMs: 60_000 });
    const listener = other.listen(databaseUrl);
    try {
      await listener.ready;
      expect((await other.verify(p.apiKey)) as object).not.toHaveProperty("allow");
      const lists = await parseBody(json({ origins: ["HTTPS://App.Example.com/", "*.example.org"], ips: ["10.1.2.3/8", "2001:db8::1"] }), allowlistSchema);
      const saved = await setKeyAllowlist(p.userId, p.projectId, key!.id, lists);
      expect([saved.allowedOrigins, saved.allowedIps]).toEqual([
        ["https://app.example.com", "*.example.org"],
        ["10.0.0.0/8", "2001:db8::1"],
      ]);
      expect((await listKeys(p.userId, p.projectId))[0]).toMatchObject({ allowedOrigins: saved.allowedOrigins, allowedIps: saved.allowedIps });
      await waitFor(() => other.verify(p.apiKey) instanceof Promise, "the change to reach the other verifier");
      const principal = await other.verify(p.apiKey);
      if (typeof principal === "string") throw new Error(principal);
      expect(principal.allow?.refusal("https://evil.example", () => "10.0.0.1")).toBe("The origin https://evil.example is not in this key's allowlist.");
      expect(principal.allow?.refusal("https://app.example.com", () => "10.0.0.1")).toBeUndefined();

      await setKeyAllowlist(p.userId, p.projectId, key!.id, { origins: [], ips: [] });
      await waitFor(() => other.verify(p.apiKey) instanceof Promise, "the cleared lists to reach the other verifier");
      expect((await other.verify(p.apiKey)) as object).not.toHaveProperty("allow");
    } finally {
      await listener.stop();
    }
  });

  it("answers bad lists with 400 and a message naming the entry", async () => {
    const cases: [unknown, string, string][] = [
      [{ origins: [], ips: ["10.0.0.0/33"] }, "INVALID_PARAMETER", 'ips: "10.0.0.0/33": an IPv4 prefix length is at most 32.'],
      [{ origins: [], ips: ["300.1.1.1"] }, "INVALID_PARAMETER", 'ips: "300.1.1.1" is not an IP address or CIDR range: use forms such as 203.0.113.7, 198.51.100.0/24 or 2001:db8::/32.'],
      [{ origins: ["https://example.com/app"], ips: [] }, "INVALID_PARAMETER", 'origins: "https://example.com/app" is not an origin: use a host name such as app.example.com, https://app.example.com or *.example.com (no path).'],
      [{ origins: ["*.com"], ips: [] }, "INVALID_PARAMETER", 'origins: "*.com" is too broad: a wildcard needs a domain with at least two labels, such as *.example.com.'],
      [{ origins: Array.from({ length: 26 }, (_, i) => `s${i}.example.com`), ips: [] }, "INVALID_PARAMETER", "origins: A key allows at most 25 origins; 26 were given."],
      [{ origins: [] }, "MISSING_REQUIRED_PARAMETER", "ips: addresses must be a list"],
    ];
    for (const [body, code, message] of cases) expect(await failure(parseBody(json(body), allowlistSchema))).toEqual({ status: 400, code, message });
    expect(await failure(parseBody(json({ origins: "example.com", ips: [] }), allowlistSchema))).toMatchObject({ status: 400, message: "origins: origins must be a list" });
  });
});

describe("another user's project", () => {
  it("answers 404 for every key operation, as for a project that does not exist", async () => {
    const owner = await createTestProject("Owner", "DEVELOPER");
    const stranger = await createTestProject();
    const [key] = await listKeys(owner.userId, owner.projectId);
    const calls = [
      listKeys(stranger.userId, owner.projectId),
      createAdditionalKey(stranger.userId, owner.projectId, "Mine"),
      renameKey(stranger.userId, owner.projectId, key!.id, "Mine"),
      revealKey(stranger.userId, owner.projectId, key!.id),
      resetKeyForUser(stranger.userId, owner.projectId, key!.id),
      revokeKeyForUser(stranger.userId, owner.projectId, key!.id),
      setKeyAllowlist(stranger.userId, owner.projectId, key!.id, { origins: ["evil.example"], ips: [] }),
      // Their own project, the owner's key id.
      renameKey(stranger.userId, stranger.projectId, key!.id, "Mine"),
      setKeyAllowlist(stranger.userId, stranger.projectId, key!.id, { origins: ["evil.example"], ips: [] }),
    ];
    for (const call of calls) expect(await failure(call)).toMatchObject({ status: 404, code: "RESOURCE_NOT_FOUND" });
    expect((await listKeys(owner.userId, owner.projectId))[0]).toMatchObject({ name: "Default key", allowedOrigins: [] });
  });
});
