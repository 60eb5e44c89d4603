import { execFile } from "node:child_process";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "@/lib/auth/users";
import { db, disconnectDb } from "@/lib/db/client";
import { isDatabaseUnreachable } from "@/lib/db/outage";
import { setDatabaseUrl } from "@/lib/env";
import { newId } from "@/lib/ids";
import { completeOnboarding, createProject } from "@/lib/projects/service";
import { startFaultProxy } from "@/lib/testing/fault-proxy";
import { createTestProject, connectTestDatabase, uniqueEmail } from "@/lib/testing/harness";
import { createAdditionalKey, resetKey } from "./service";
import { generateKeyMaterial, hashKey } from "./secret";
import { services } from "@/lib/services";
import { KeyVerifier } from "./verifier";

const root = path.resolve(import.meta.dirname, "../..");
let databaseUrl: string;

beforeAll(async () => {
  databaseUrl = await connectTestDatabase();
});
afterAll(async () => disconnectDb());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 15_000) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check()) return;
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** True when the verifier answers from its cache (synchronously); otherwise it has started a lookup. */
const cached = (keys: KeyVerifier, secret: string) => !(keys.verify(secret) instanceof Promise);

const LISTENER = `blockgate key invalidations (pid ${process.pid})`;

/** A well-formed key that was never issued. */
const unknownKey = () => generateKeyMaterial().secret;

async function principalOf(projectId: string) {
  const key = await db().apiKey.findFirstOrThrow({ where: { projectId }, select: { id: true, project: { select: { ownerId: true } } } });
  return { keyId: key.id, projectId, plan: "FREE", overage: false, ownerId: key.project.ownerId };
}

describe("key verification", () => {
  it("looks a key up once, then answers from the cache synchronously", async () => {
    const p = await createTestProject();
    const keys = new KeyVerifier({ cacheTtlMs: 60_000 });
    const first = keys.verify(p.apiKey);
    expect(first).toBeInstanceOf(Promise);
    expect(await first).toEqual(await principalOf(p.projectId));
    expect(keys.lookups).toBe(1);
    for (let i = 0; i < 5; i++) expect(keys.verify(p.apiKey)).toEqual(await principalOf(p.projectId));
    expect(keys.lookups).toBe(1);
  });

  it("asks the database again once the answer is older than the TTL, and every time with a TTL of 0", async () => {
    const p = await createTestProject();
    const short = new KeyVerifier({ cacheTtlMs: 50 });
    await short.verify(p.apiKey);
    await sleep(100);
    const again = short.verify(p.apiKey);
    expect(again).toBeInstanceOf(Promise);
    expect(await again).toMatchObject({ projectId: p.projectId });
    expect(short.lookups).toBe(2);

    const none = new KeyVerifier({ cacheTtlMs: 0 });
    for (let i = 0; i < 3; i++) expect(await none.verify(p.apiKey)).toMatchObject({ projectId: p.projectId });
    expect(none.lookups).toBe(3);
  });

  it("refuses what is not shaped like a key without a lookup", () => {
    const keys = new KeyVerifier({ cacheTtlMs: 60_000 });
    for (const junk of ["", "bg_", "bg_' OR 1=1 --", "bg_" + "a".repeat(10_000), "'; DROP TABLE api_keys; --"]) {
      expect(keys.verify(junk)).toBe("MALFORMED");
    }
    expect(keys.lookups).toBe(0);
  });

  it("caches a key that does not exist (negative caching)", async () => {
    const keys = new KeyVerifier({ cacheTtlMs: 60_000 });
    const key = unknownKey();
    expect(await keys.verify(key)).toBe("NOT_FOUND");
    for (let i = 0; i < 5; i++) expect(keys.verify(key)).toBe("NOT_FOUND");
    expect(keys.lookups).toBe(1);
  });

  it("makes one database lookup for 50 concurrent requests with a new key (single flight)", async () => {
    const p = await createTestProject();
    const keys = new KeyVerifier({ cacheTtlMs: 60_000 });
    const answers = await Promise.all(Array.from({ length: 50 }, () => keys.verify(p.apiKey)));
    expect(keys.lookups).toBe(1);
    expect(new Set(answers.map((a) => JSON.stringify(a)))).toEqual(new Set([JSON.stringify(await principalOf(p.projectId))]));

    const unknown = unknownKey();
    const refusals = await Promise.all(Array.from({ length: 50 }, () => keys.verify(unknown)));
    expect(keys.lookups).toBe(2);
    expect(new Set(refusals)).toEqual(new Set(["NOT_FOUND"]));
  });

  it("stops accepting a key reset in this process at once, and accepts its replacement", async () => {
    const p = await createTestProject();
    const keys = services().keyVerifier;
    await keys.verify(p.apiKey);
    expect(keys.verify(p.apiKey)).toMatchObject({ projectId: p.projectId });
    const key = await db().apiKey.findFirstOrThrow({ where: { projectId: p.projectId } });
    const fresh = await resetKey(p.projectId, key.id);
    const old = keys.verify(p.apiKey);
    expect(old).toBeInstanceOf(Promise);
    expect(await old).toBe("NOT_FOUND");
    expect(await keys.verify(fresh)).toEqual(await principalOf(p.projectId));
  });

  it("does not cache an answer read before a reset that happened while it was being read", async () => {
    const p = await createTestProject();
    const keys = new KeyVerifier({ cacheTtlMs: 60_000 });
    const inFlight = keys.verify(p.apiKey);
    keys.forget(hashKey(p.apiKey));
    await inFlight;
    expect(keys.verify(p.apiKey)).toBeInstanceOf(Promise);
  });
});

describe("unknown keys", () => {
  it("caches unknown keys apart from valid ones: a flood of made-up keys pushes out only made-up keys", async () => {
    const p = await createTestProject();
    const keys = new KeyVerifier({ cacheTtlMs: 60_000, maxUnknown: 5 });
    await keys.verify(p.apiKey);
    const madeUp = Array.from({ length: 12 }, unknownKey);
    for (const k of madeUp) expect(await keys.verify(k)).toBe("NOT_FOUND");
    expect(keys.lookups).toBe(13);
    expect(keys.verify(p.apiKey)).toMatchObject({ projectId: p.projectId });
    // The five most recent are remembered; the oldest were dropped and cost a lookup again.
    for (const k of madeUp.slice(-5)) expect(keys.verify(k)).toBe("NOT_FOUND");
    expect(keys.lookups).toBe(13);
    expect(await keys.verify(madeUp[0]!)).toBe("NOT_FOUND");
    expect(keys.lookups).toBe(14);
  });

  it("accepts a key created after it was refused: at once when its creation is announced, after the TTL otherwise", async () => {
    const p = await createTestProject();
    const addKey = (m: ReturnType<typeof generateKeyMaterial>) =>
      db().apiKey.create({ data: { id: newId("key"), projectId: p.projectId, name: "later", hash: m.hash, ciphertext: m.ciphertext, start: m.start } });

    const announced = generateKeyMaterial();
    const keys = new KeyVerifier({ cacheTtlMs: 60_000 });
    expect(await keys.verify(announced.secret)).toBe("NOT_FOUND");
    await addKey(announced);
    expect(keys.verify(announced.secret)).toBe("NOT_FOUND");
    keys.forget(announced.hash);
    expect(await keys.verify(announced.secret)).toMatchObject({ projectId: p.projectId });

    const silent = generateKeyMaterial();
    const short = new KeyVerifier({ cacheTtlMs: 50 });
    expect(await short.verify(silent.secret)).toBe("NOT_FOUND");
    await addKey(silent);
    await sleep(100);
    expect(await short.verify(silent.secret)).toMatchObject({ projectId: p.projectId });
  });

  it("announces every new key (project, onboarding, additional key, reset) and the reset one to every listening process", async () => {
    // Another process's verifier, hearing the announcements.
    const other = new KeyVerifier({ cacheTtlMs: 60_000 });
    const listening = other.listen(databaseUrl);
    await listening.ready;
    const heard: Array<string | undefined> = [];
    const stop = other.onForget((hash) => heard.push(hash));
    const announced = async (...hashes: string[]) => {
      await waitFor(() => hashes.every((h) => heard.includes(h)), `the announcement of ${hashes.length} key(s)`);
      heard.length = 0;
    };
    try {
      const user = await createUser({ email: uniqueEmail(), password: "correct horse battery" });
      const { projectId: first } = await completeOnboarding(user.id, { name: "Ada", organization: "", useCase: "wallet" });
      await announced((await db().apiKey.findFirstOrThrow({ where: { projectId: first } })).hash);

      const second = await createProject(user.id, "Second");
      await announced(hashKey(second.apiKey));

      await db().project.update({ where: { id: second.projectId }, data: { plan: "DEVELOPER" } });
      const extra = await createAdditionalKey(user.id, second.projectId, "extra");
      await announced(hashKey(extra.apiKey));

      const fresh = await resetKey(second.projectId, extra.id);
      await announced(hashKey(extra.apiKey), hashKey(fresh));
    } finally {
      stop();
      await listening.stop();
    }
  });

  it("calls beforeLookup only for keys not found valid lately, so a real key is looked up whatever the caller limits", async () => {
    const p = await createTestProject();
    const keys = new KeyVerifier({ cacheTtlMs: 50 });
    const refuse = () => {
      throw new Error("refused before the lookup");
    };
    // Never seen: the caller decides.
    expect(() => keys.verify(p.apiKey, refuse)).toThrow("refused before the lookup");
    expect(() => keys.verify(unknownKey(), refuse)).toThrow("refused before the lookup");
    expect(keys.lookups).toBe(0);

    let asked = 0;
    expect(await keys.verify(p.apiKey, () => asked++)).toMatchObject({ projectId: p.projectId });
    expect(asked).toBe(1);
    // Its cached answer expired: looked up again without asking the caller.
    await sleep(100);
    const again = keys.verify(p.apiKey, refuse);
    expect(again).toBeInstanceOf(Promise);
    expect(await again).toMatchObject({ projectId: p.projectId });
    expect(keys.lookups).toBe(2);
    // Once reset, it is a key like any other.
    keys.forget(hashKey(p.apiKey));
    expect(() => keys.verify(p.apiKey, refuse)).toThrow("refused before the lookup");

    // Requests that join a lookup in flight start none: asked once for 20 of them.
    let joined = 0;
    const unknown = unknownKey();
    expect(new Set(await Promise.all(Array.from({ length: 20 }, () => keys.verify(unknown, () => joined++))))).toEqual(new Set(["NOT_FOUND"]));
    expect(joined).toBe(1);
  });
});

describe("invalidation across processes", () => {
  it("stops accepting a key reset by another process (the admin CLI) once its notification arrives", async () => {
    const p = await createTestProject();
    const keys = new KeyVerifier({ cacheTtlMs: 60_000 });
    const listener = keys.listen(databaseUrl);
    try {
      await listener.ready;
      await keys.verify(p.apiKey);
      expect(keys.verify(p.apiKey)).toMatchObject({ projectId: p.projectId });

      const reset = await new Promise<{ code: number; stdout: string }>((resolve) => {
        execFile(
          process.execPath,
          [path.join(root, "node_modules", "tsx", "dist", "cli.mjs"), "bin/admin.ts", "reset-key", "--project", p.projectId],
          { cwd: root, env: { ...process.env, DATABASE_URL: databaseUrl } },
          (error, stdout) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout }),
        );
      });
      expect(reset.code).toBe(0);
      const fresh = (JSON.parse(reset.stdout) as { apiKey: string }).apiKey;

      // The TTL is a minute: only the notification can have dropped the cached answer.
      await waitFor(() => !cached(keys, p.apiKey), "the invalidation to arrive");
      expect(await keys.verify(p.apiKey)).toBe("NOT_FOUND");
      expect(await keys.verify(fresh)).toMatchObject({ projectId: p.projectId });
    } finally {
      await listener.stop();
    }
  });

  it("applies a notification sent on another connection, and drops the whole cache after reconnecting", async () => {
    const p = await createTestProject();
    const other = await createTestProject();
    const keys = new KeyVerifier({ cacheTtlMs: 60_000 });
    const listener = keys.listen(databaseUrl);
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      await listener.ready;
      await keys.verify(p.apiKey);
      await keys.verify(other.apiKey);
      expect(cached(keys, p.apiKey) && cached(keys, other.apiKey)).toBe(true);

      await client.query("SELECT pg_notify('blockgate_key_invalidated', $1)", [hashKey(p.apiKey)]);
      await waitFor(() => !cached(keys, p.apiKey), "the notification to arrive");
      expect(cached(keys, other.apiKey)).toBe(true);

      // Cut the listener's connection: notifications sent while it is away are lost, so once back
      // it must not trust anything it cached.
      const listenerPids = async () =>
        (await client.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE application_name = $1", [LISTENER])).rows.map((r) => r.pid);
      let pids: number[] = [];
      await waitFor(async () => (pids = await listenerPids()).length === 1, "one listener connection");
      await keys.verify(p.apiKey);
      await client.query("SELECT pg_terminate_backend($1)", [pids[0]]);
      await waitFor(async () => {
        const now = await listenerPids();
        return now.length === 1 && now[0] !== pids[0];
      }, "the listener to reconnect");
      await waitFor(() => !cached(keys, other.apiKey), "the cache to be dropped");
      expect(cached(keys, p.apiKey)).toBe(false);
      // The probes above started lookups: both keys are still valid.
      expect(await keys.verify(p.apiKey)).toMatchObject({ projectId: p.projectId });
      expect(await keys.verify(other.apiKey)).toMatchObject({ projectId: other.projectId });
    } finally {
      await client.end();
      await listener.stop();
    }
  });
});

describe("key verification while the database is unreachable", () => {
  it("answers a key from its expired cache entry, and refuses a key it never saw with the database's failure", async () => {
    const p = await createTestProject();
    const principal = await principalOf(p.projectId);
    const keys = new KeyVerifier({ cacheTtlMs: 50 });
    expect(await keys.verify(p.apiKey)).toEqual(principal);
    const proxy = await startFaultProxy({ host: new URL(databaseUrl).hostname, port: Number(new URL(databaseUrl).port) });
    await disconnectDb();
    setDatabaseUrl(proxy.via(databaseUrl));
    try {
      proxy.refuse();
      await sleep(100);
      // Expired, so the database is asked; it cannot answer, so the last answer stands.
      expect(await keys.verify(p.apiKey)).toEqual(principal);
      await expect(keys.verify(unknownKey())).rejects.toSatisfy(isDatabaseUnreachable);
      expect(keys.lookups).toBe(3);
    } finally {
      await disconnectDb();
      setDatabaseUrl(databaseUrl);
      await proxy.close();
    }
  });
});
