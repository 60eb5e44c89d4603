/**
 * Key changes across processes: two verifiers on one database, each listening on its own
 * connection as two web processes do. A change made through the service (this process's verifier)
 * reaches the other within a second, also when the other's listening connection was lost, cut by
 * the server or left half-open (the heartbeat notices), and so do the key's holders there.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db, disconnectDb } from "@/lib/db/client";
import { componentLogger } from "@/lib/log";
import { startFaultProxy, type FaultProxy } from "@/lib/testing/fault-proxy";
import { connectTestDatabase, createTestProject } from "@/lib/testing/harness";
import { captureLogs } from "@/lib/testing/logs";
import { KeyHolders, type KeyHolder } from "./holders";
import { createAdditionalKey, resetKey, revokeKey } from "./service";
import { KeyVerifier, type KeyPrincipal } from "./verifier";

let databaseUrl: string;
let proxy: FaultProxy;

beforeAll(async () => {
  databaseUrl = await connectTestDatabase();
  const url = new URL(databaseUrl);
  proxy = await startFaultProxy({ host: url.hostname, port: Number(url.port) });
});
afterAll(async () => {
  await disconnectDb();
  await proxy.close();
});

/** Polls `check` until it holds; fails after `timeoutMs`. */
async function within(timeoutMs: number, what: string, check: () => Promise<boolean> | boolean): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Another process's verifier: its own cache (answers kept a minute) and its own listening connection. */
async function otherProcess(url = databaseUrl) {
  const logs = captureLogs();
  const verifier = new KeyVerifier({ cacheTtlMs: 60_000, logger: logs.logger });
  const listening = verifier.listen(url, { heartbeatMs: 200 });
  await listening.ready;
  return { verifier, listening, logs };
}

async function projectWithTwoKeys(name: string) {
  const p = await createTestProject(name, "DEVELOPER");
  const second = await createAdditionalKey(p.userId, p.projectId, "Second");
  const first = await db().apiKey.findFirstOrThrow({ where: { projectId: p.projectId, id: { not: second.id } } });
  return { ...p, firstKeyId: first.id, second };
}

describe("a key changed in one process", () => {
  it("is refused by another within a second, and the other's holders of it are refused", async () => {
    const p = await projectWithTwoKeys("Invalidation across processes");
    const other = await otherProcess();
    try {
      const principal = (await other.verifier.verify(p.second.apiKey)) as KeyPrincipal;
      expect(principal.keyId).toBe(p.second.id);
      const heard: string[] = [];
      const holders = new KeyHolders(componentLogger("test"), { recheckRetryMs: 10, recheckRetryMaxMs: 10 }, () => other.verifier);
      const holder: KeyHolder = { principal, origin: undefined, address: () => "203.0.113.9", renewed: () => heard.push("renewed"), refused: (reason) => heard.push(reason) };
      holders.hold(holder, holders.admit(principal));

      await revokeKey(p.projectId, p.second.id);
      await within(1000, "the revoked key refused there", async () => (await other.verifier.verify(p.second.apiKey)) === "REVOKED");
      await within(1000, "its holder refused there", () => heard.includes("API key revoked"));

      expect(typeof (await other.verifier.verify(p.apiKey))).toBe("object");
      const secret = await resetKey(p.projectId, p.firstKeyId);
      await within(1000, "the reset key refused there", async () => (await other.verifier.verify(p.apiKey)) === "NOT_FOUND");
      expect(typeof (await other.verifier.verify(secret))).toBe("object");
    } finally {
      await other.listening.stop();
    }
  });

  it("is refused by another whose listening connection the server ended meanwhile, once it listens again", async () => {
    const p = await projectWithTwoKeys("Invalidation, listener cut");
    const other = await otherProcess();
    try {
      expect(typeof (await other.verifier.verify(p.second.apiKey))).toBe("object");
      await db().$executeRaw`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = ${`blockgate key invalidations (pid ${process.pid})`} AND pid <> pg_backend_pid()`;
      await revokeKey(p.projectId, p.second.id);
      await within(3000, "the revoked key refused there", async () => (await other.verifier.verify(p.second.apiKey)) === "REVOKED");
    } finally {
      await other.listening.stop();
    }
  });

  it("is refused by another whose listening connection went silent (half-open), once its heartbeat is missed", async () => {
    const p = await projectWithTwoKeys("Invalidation, listener half-open");
    const other = await otherProcess(proxy.via(databaseUrl));
    try {
      expect(typeof (await other.verifier.verify(p.second.apiKey))).toBe("object");
      proxy.freeze();
      await revokeKey(p.projectId, p.second.id);
      // Two heartbeats missed (0.4 s), a reconnection (RECONNECT_MS), and the cache is dropped.
      await within(3000, "the revoked key refused there", async () => (await other.verifier.verify(p.second.apiKey)) === "REVOKED");
      expect(other.logs.messages.some((m) => m.startsWith("key invalidation listener cannot reach the database"))).toBe(true);
    } finally {
      await other.listening.stop();
    }
  });
});
