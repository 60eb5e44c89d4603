/** What the verifier tells about dropped answers (onForget), and verifying a held principal's key again. */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { disconnectDb } from "@/lib/db/client";
import { createTestProject, connectTestDatabase } from "@/lib/testing/harness";
import { captureLogs } from "@/lib/testing/logs";
import { createAdditionalKey, revokeKey } from "./service";
import { hashKey } from "./secret";
import { KeyVerifier, type KeyPrincipal } from "./verifier";

let databaseUrl: string;

beforeAll(async () => {
  databaseUrl = await connectTestDatabase();
});
afterAll(async () => disconnectDb());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor(check: () => boolean, what: string, timeoutMs = 15_000) {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describe("onForget", () => {
  it("tells each forgotten key (local and notified) and a whole-cache drop (undefined), until unsubscribed", async () => {
    const p = await createTestProject();
    const keys = new KeyVerifier({ cacheTtlMs: 60_000 });
    const heard: Array<string | undefined> = [];
    const stop = keys.onForget((hash) => heard.push(hash));
    const listening = keys.listen(databaseUrl);
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      await listening.ready;
      // Listening drops whatever was cached before: everything is forgotten.
      await waitFor(() => heard.includes(undefined), "the whole-cache drop");
      heard.length = 0;

      keys.forget("a".repeat(64));
      expect(heard).toEqual(["a".repeat(64)]);

      const hash = hashKey(p.apiKey);
      await client.query("SELECT pg_notify('blockgate_key_invalidated', $1)", [hash]);
      await waitFor(() => heard.includes(hash), "the notification");

      stop();
      keys.forget("b".repeat(64));
      expect(heard).not.toContain("b".repeat(64));
    } finally {
      await client.end();
      await listening.stop();
    }
  });

  it("keeps telling the other listeners when one throws", () => {
    const logs = captureLogs();
    const keys = new KeyVerifier({ cacheTtlMs: 60_000, logger: logs.logger });
    const heard: Array<string | undefined> = [];
    keys.onForget(() => {
      throw new Error("boom");
    });
    keys.onForget((hash) => heard.push(hash));
    expect(() => keys.forget("c".repeat(64))).not.toThrow();
    expect(heard).toEqual(["c".repeat(64)]);
    expect(logs.messages).toEqual(["a key invalidation listener failed"]);
  });
});

describe("a held principal's key", () => {
  it("is named by keyHashOf and verified again by verifyAgain: from the cache, then from the database once forgotten", async () => {
    const p = await createTestProject("verify again", "ENTERPRISE");
    const extra = await createAdditionalKey(p.userId, p.projectId, "held");
    const keys = new KeyVerifier({ cacheTtlMs: 60_000 });
    const principal = (await keys.verify(extra.apiKey)) as KeyPrincipal;
    expect(keys.keyHashOf(principal)).toBe(hashKey(extra.apiKey));
    expect(keys.verifyAgain(principal)).toBe(principal);
    const lookups = keys.lookups;

    await revokeKey(p.projectId, extra.id); // forgets in the process's own verifier, not in this one
    expect(keys.verifyAgain(principal)).toBe(principal);
    keys.forget(hashKey(extra.apiKey));
    expect(await keys.verifyAgain(principal)).toBe("REVOKED");
    expect(keys.lookups).toBe(lookups + 1);

    // A principal this verifier did not answer (a copy) names no key.
    expect(keys.keyHashOf({ ...principal })).toBeUndefined();
    expect(keys.verifyAgain({ ...principal })).toBe("MALFORMED");
  });
});
