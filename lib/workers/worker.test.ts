import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { db, disconnectDb } from "@/lib/db/client";
import { connectTestDatabase } from "@/lib/testing/harness";
import { captureLogs } from "@/lib/testing/logs";
import { CursorConflictError, workerCursor } from "./cursor";
import { checkTerm, LeaderLock, LeadershipLostError } from "./leader-lock";
import { startWorker, WORKER_DONE, type Failure, type WorkerHandle, type WorkerOptions } from "./worker";

let databaseUrl: string;
const running: WorkerHandle[] = [];

beforeAll(async () => {
  databaseUrl = await connectTestDatabase();
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((w) => w.stop()));
});
afterAll(async () => disconnectDb());

const uniqueKey = () => `k${randomBytes(6).toString("hex")}`;

function start<S>(options: WorkerOptions<S>): WorkerHandle {
  const handle = startWorker(options);
  running.push(handle);
  return handle;
}

async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await delay(10);
  }
}

/** The backend holding the leader lock of (kind, key), found by the name its connection carries. */
async function lockHolder(kind: string, key: string): Promise<number | undefined> {
  const rows = await db().$queryRaw<Array<{ pid: number }>>`
    SELECT l.pid FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
    WHERE l.locktype = 'advisory' AND l.granted AND a.application_name = ${`blockgate worker ${kind}:${key}`}`;
  expect(rows.length).toBeLessThanOrEqual(1);
  return rows[0]?.pid;
}

describe("a leader worker", () => {
  it("steps in one instance per kind and key; when it stops, a waiting one takes over", async () => {
    const key = uniqueKey();
    const steps: string[] = [];
    const logs = { a: captureLogs(), b: captureLogs() };
    const make = (name: "a" | "b") =>
      start({
        kind: "test-leader",
        key,
        leader: { databaseUrl, pollMs: 20 },
        logger: logs[name].logger,
        init: async () => ({}),
        step: async () => {
          steps.push(name);
          return 5;
        },
      });
    const a = make("a");
    await waitFor("a to step", () => steps.length >= 3);
    make("b");
    await waitFor("b to try the lock", () => logs.b.messages.length > 0);
    const before = steps.length;
    await waitFor("a to go on stepping", () => steps.length >= before + 10);
    expect(steps.filter((s) => s === "b")).toEqual([]);
    expect(logs.b.messages).toEqual([`another worker holds the lock blockgate:test-leader:${key}; waiting to take over`]);

    await a.stop();
    const stoppedAt = steps.length;
    await waitFor("b to take over", () => steps.filter((s) => s === "b").length >= 3);
    expect(steps.slice(stoppedAt).every((s) => s === "b")).toBe(true);
    expect(logs.b.messages).toContain(`took over the lock blockgate:test-leader:${key}`);
  });

  it("stops stepping when its lock connection is killed, and takes the lock again before going on", async () => {
    const key = uniqueKey();
    const events: string[] = [];
    const { logger, messages } = captureLogs();
    start({
      kind: "test-lost",
      key,
      leader: { databaseUrl, pollMs: 20 },
      logger,
      init: async () => {
        events.push("init");
        return {};
      },
      step: async () => {
        events.push("step");
        return 5;
      },
    });
    await waitFor("the first steps", () => events.length >= 3);
    const first = await lockHolder("test-lost", key);
    expect(first).toBeDefined();
    await db().$queryRaw`SELECT pg_terminate_backend(${first}::int)`;
    await waitFor("the lock to be taken again", () => events.filter((e) => e === "init").length === 2);
    const second = await lockHolder("test-lost", key);
    expect(second).toBeDefined();
    expect(second).not.toBe(first);
    const again = events.lastIndexOf("init");
    await waitFor("steps under the new lock", () => events.length >= again + 3);
    expect(messages).toEqual(["lost the leader lock (its database connection dropped): stopped stepping until it is taken again"]);
  });

  it("never has two instances stepping at once, even when the leader's connection is killed mid-step", async () => {
    const key = uniqueKey();
    let active = 0;
    let most = 0;
    const steps: Array<{ name: string; aborted: boolean }> = [];
    const make = (name: string) =>
      start({
        kind: "test-overlap",
        key,
        leader: { databaseUrl, pollMs: 5 },
        logger: captureLogs().logger,
        init: async () => ({}),
        step: async (_state, { signal }) => {
          active++;
          most = Math.max(most, active);
          await delay(15, undefined, { signal }).catch(() => undefined);
          steps.push({ name, aborted: signal.aborted });
          active--;
          return 0;
        },
      });
    make("a");
    make("b");
    for (let round = 0; round < 3; round++) {
      let holder: number | undefined;
      await waitFor("a leader", async () => (holder = await lockHolder("test-overlap", key)) !== undefined);
      const at = steps.length;
      await db().$queryRaw`SELECT pg_terminate_backend(${holder}::int)`;
      await waitFor("a new leader to step", async () => steps.length >= at + 3 && (await lockHolder("test-overlap", key)) !== holder);
    }
    expect(most).toBe(1);
    expect(steps.some((s) => s.aborted)).toBe(true);
  });

  it("ends for good when init says it is done, and leaves the lock to another", async () => {
    const key = uniqueKey();
    const events: string[] = [];
    const make = (name: string, done: boolean) =>
      start({
        kind: "test-done",
        key,
        leader: { databaseUrl, pollMs: 20 },
        logger: captureLogs().logger,
        init: async () => {
          events.push(`${name} init`);
          return done ? WORKER_DONE : {};
        },
        step: async () => {
          events.push(`${name} step`);
          return 5;
        },
      });
    make("a", true);
    await waitFor("a to end", () => events.length === 1);
    make("b", false);
    await waitFor("b to step", () => events.includes("b step"));
    expect(events.filter((e) => e.startsWith("a"))).toEqual(["a init"]);
  });

  it("runs independently for two keys of the same kind", async () => {
    const [k1, k2] = [uniqueKey(), uniqueKey()];
    const counts = new Map<string, number>();
    for (const key of [k1, k2]) {
      start({
        kind: "test-keys",
        key,
        leader: { databaseUrl, pollMs: 20 },
        logger: captureLogs().logger,
        init: async () => ({}),
        step: async () => {
          counts.set(key, (counts.get(key) ?? 0) + 1);
          return 5;
        },
      });
    }
    await waitFor("both keys to step", () => (counts.get(k1) ?? 0) >= 5 && (counts.get(k2) ?? 0) >= 5);
    expect(await lockHolder("test-keys", k1)).not.toBe(await lockHolder("test-keys", k2));
  });
});

describe("a leader that stops answering", () => {
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const c of children.splice(0)) c.kill("SIGKILL");
  });

  /** A worker process leading (kind, key) with `timing` (fixtures/leader.ts); `output` grows with its stdout. */
  async function leaderProcess(kind: string, key: string, timing: object) {
    const child = spawn(process.execPath, ["--import", "tsx", path.join(import.meta.dirname, "fixtures", "leader.ts"), kind, key, JSON.stringify(timing)], {
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, DATABASE_URL: databaseUrl },
    });
    children.push(child);
    const out = { text: "" };
    child.stdout!.on("data", (d: Buffer) => (out.text += d.toString()));
    await waitFor("the process to lead", () => out.text.includes("step 3\n"));
    return { child, out };
  }

  /** A worker in this process that waits for the lock of (kind, key), then records each step. */
  function waiter(kind: string, key: string, leader: WorkerOptions<object>["leader"]) {
    const steps: number[] = [];
    const logs = captureLogs();
    start({ kind, key, leader, logger: logs.logger, init: async () => ({}), step: async () => (steps.push(Date.now()), 50) });
    return { steps, logs };
  }

  it("is taken over once its session times out when its process is stopped (SIGSTOP), and writes nothing when it wakes", async () => {
    const key = uniqueKey();
    const timing = { sessionTimeoutMs: 1500, pingMs: 500, fenceGraceMs: 500, pollMs: 100 };
    const { child, out } = await leaderProcess("test-frozen", key, timing);
    const childCursor = workerCursor("test-frozen", `${key}:child`, z.object({ n: z.number() }));
    const b = waiter("test-frozen", key, { databaseUrl, pollMs: timing.pollMs, timing });
    await waitFor("the waiter to wait", () => b.logs.messages.length > 0);

    child.kill("SIGSTOP");
    const stoppedAt = Date.now();
    // Nothing from the stopped process reaches the server: its lock lasts until the session's timeout.
    await waitFor("the takeover", () => b.steps.length > 0, timing.sessionTimeoutMs + timing.pollMs + 3000);
    expect(b.steps[0]! - stoppedAt).toBeGreaterThanOrEqual(timing.sessionTimeoutMs - timing.pingMs);
    const atTakeover = await childCursor.read();

    child.kill("SIGCONT");
    await waitFor("the woken process to give up", () => /another worker holds the lock .*; waiting to take over/.test(out.text), 10_000);
    expect(out.text).toMatch(/lost the leader lock \((no answer from the database for \d+ ms|its database connection dropped|term \d+ of blockgate:test-frozen:\w+ is over: another worker took over the lock)\)/);
    expect(await childCursor.read()).toEqual(atTakeover);
    expect(out.text.slice(out.text.indexOf("lost the leader lock"))).not.toMatch(/step \d+/);
  }, 30_000);

  it("is taken over within the default poll when its process is killed", async () => {
    const key = uniqueKey();
    const { child } = await leaderProcess("test-killed", key, {});
    const b = waiter("test-killed", key, { databaseUrl });
    await waitFor("the waiter to wait", () => b.logs.messages.length > 0);
    child.kill("SIGKILL");
    const killedAt = Date.now();
    await waitFor("the takeover", () => b.steps.length > 0, 2000 + 3000);
    expect(b.steps[0]! - killedAt).toBeLessThan(10_000);
  }, 30_000);

  it("fences its writes: one of the previous term is refused, and one left open is ended by the new leader", async () => {
    const key = uniqueKey();
    const a = new LeaderLock(databaseUrl, "test-fenced", key, () => undefined);
    expect(await a.tryAcquire()).toBe(true);
    const oldTerm = a.term!;
    // A write of the old term, open when its process stopped: it holds the term's row.
    const open = new pg.Client({ connectionString: databaseUrl });
    open.on("error", () => undefined);
    await open.connect();
    await open.query("BEGIN");
    await checkTerm(open, oldTerm);
    // The server ends the silent lock session (as idle_session_timeout does).
    await db().$queryRaw`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = ${`blockgate worker test-fenced:${key}`}`;
    await waitFor("the lock to be lost", () => a.lost);

    const b = waiter("test-fenced", key, { databaseUrl, pollMs: 20, timing: { fenceGraceMs: 200 } });
    await waitFor("the new leader to step", () => b.steps.length > 0);
    expect(b.logs.messages).toContain(`ended 1 write(s) of the previous term of blockgate:test-fenced:${key} still open after 200 ms`);
    await expect(open.query("COMMIT")).rejects.toThrow();
    await open.end().catch(() => undefined);

    const cursor = workerCursor("test-fenced", key, z.object({ by: z.string() }));
    await expect(db().$transaction(async (tx) => {
      await checkTerm(tx, oldTerm);
      await cursor.write(tx, { by: "old" });
    })).rejects.toBeInstanceOf(LeadershipLostError);
    expect(await cursor.read()).toBeNull();
    await a.release();
  });
});

describe("a worker without a leader lock", () => {
  it("runs in two instances at once", async () => {
    const key = uniqueKey();
    let entered = 0;
    let bothIn!: () => void;
    const together = new Promise<void>((resolve) => (bothIn = resolve));
    const passed: string[] = [];
    for (const name of ["a", "b"]) {
      start({
        kind: "test-parallel",
        key,
        logger: captureLogs().logger,
        init: async () => ({}),
        step: async () => {
          // Each step waits for the other instance to be inside a step too.
          if (++entered === 2) bothIn();
          await together;
          passed.push(name);
          return 60_000;
        },
      });
    }
    await waitFor("both instances to be in a step at once", () => passed.length === 2);
    expect(passed.toSorted()).toEqual(["a", "b"]);
    expect(await lockHolder("test-parallel", key)).toBeUndefined();
  });
});

describe("failures", () => {
  it("back off exponentially up to the maximum, log once per streak, and reset after a success", async () => {
    const { logger, lines } = captureLogs();
    const script = ["remote", "remote", "remote", "remote", "remote", "ok", "database", "remote", "ok", "done"];
    const events: string[] = [];
    class RemoteError extends Error {}
    start({
      kind: "test-backoff",
      key: uniqueKey(),
      logger,
      backoff: { baseMs: 5, maxMs: 40 },
      classify: (e): Failure => (e instanceof RemoteError ? { what: "remote failed", keepState: true, level: "warn" } : { what: "database failed" }),
      position: (s: { steps: number }) => `after ${s.steps} steps`,
      init: async () => {
        events.push("init");
        return { steps: 0 };
      },
      step: async (s) => {
        const next = script[events.filter((e) => e !== "init").length]!;
        events.push(next);
        if (next === "done") return WORKER_DONE;
        if (next === "remote") throw new RemoteError(`remote ${events.length}`);
        if (next === "database") throw new Error('column "x" does not exist');
        s.steps++;
        return 0;
      },
    });
    await waitFor("the script to run", () => events.at(-1) === "done");
    // A remote failure keeps what init built; any other starts over.
    expect(events).toEqual(["init", ...script.slice(0, 7), "init", ...script.slice(7)]);
    expect(lines.filter((l) => l.level === "debug").map((l) => l.retryInMs)).toEqual([5, 10, 20, 40, 40, 5, 10]);
    expect(lines.filter((l) => l.level !== "debug").map((l) => [l.level, l.msg])).toEqual([
      ["warn", "remote failed, retrying with backoff (up to 0.04 s): remote 2"],
      ["info", "recovered after 5 failed attempts; after 1 steps"],
      ["error", 'database failed, retrying with backoff (up to 0.04 s): column "x" does not exist'],
      ["info", "recovered after 2 failed attempts; after 1 steps"],
    ]);
  });

  it("log an unreachable database as a warning without a stack: an outage to ride out, not a bug", async () => {
    const { logger, lines } = captureLogs();
    let steps = 0;
    start({
      kind: "test-outage",
      key: uniqueKey(),
      logger,
      backoff: { baseMs: 5, maxMs: 5 },
      init: async () => ({}),
      step: async () => {
        if (++steps <= 3) throw Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
        return WORKER_DONE;
      },
    });
    await waitFor("the database to be back", () => steps > 3);
    expect(lines.filter((l) => l.level !== "debug").map((l) => [l.level, l.msg, "err" in l])).toEqual([
      ["warn", "step failed, retrying with backoff (up to 0.005 s): connect ECONNREFUSED 127.0.0.1:5432", false],
    ]);
  });
});

describe("stop()", () => {
  it("returns at once during a long sleep, and no step runs after it", async () => {
    let steps = 0;
    const w = start({
      kind: "test-stop",
      key: uniqueKey(),
      leader: { databaseUrl },
      logger: captureLogs().logger,
      init: async () => ({}),
      step: async () => {
        steps++;
        return 600_000;
      },
    });
    await waitFor("the first step", () => steps === 1);
    await w.stop();
    await delay(100);
    expect(steps).toBe(1);
  }, 10_000);

  it("aborts the step's signal, waits for the step to end, releases the lock, and is idempotent", async () => {
    const key = uniqueKey();
    const events: string[] = [];
    const { logger, lines } = captureLogs();
    const w = start({
      kind: "test-abort",
      key,
      leader: { databaseUrl },
      logger,
      init: async () => ({}),
      step: async (_state, { signal }) => {
        events.push("step");
        await new Promise((resolve) => signal.addEventListener("abort", resolve));
        events.push("aborted");
        await delay(50);
        events.push("cleaned up");
        throw new Error("interrupted");
      },
    });
    await waitFor("the step", () => events.length === 1);
    expect(await lockHolder("test-abort", key)).toBeDefined();
    const stopping = w.stop();
    expect(w.stop()).toBe(stopping);
    await stopping;
    events.push("stopped");
    expect(events).toEqual(["step", "aborted", "cleaned up", "stopped"]);
    expect(await lockHolder("test-abort", key)).toBeUndefined();
    // Ended by stop(): not a failure.
    expect(lines).toEqual([]);
  });

  it("returns at once while waiting to take over", async () => {
    const key = uniqueKey();
    const make = () => start({ kind: "test-stop-waiting", key, leader: { databaseUrl, pollMs: 600_000 }, logger: captureLogs().logger, init: async () => ({}), step: async () => 600_000 });
    make();
    await waitFor("a leader", async () => (await lockHolder("test-stop-waiting", key)) !== undefined);
    const { logger, messages } = captureLogs();
    const waiting = startWorker({ kind: "test-stop-waiting", key, leader: { databaseUrl, pollMs: 600_000 }, logger, init: async () => ({}), step: async () => 0 });
    await waitFor("the second one to wait", () => messages.length === 1);
    await waiting.stop();
  }, 10_000);
});

describe("a worker cursor", () => {
  const schema = z.object({ height: z.string() });

  it("moves with the transaction that writes it: not when it rolls back, when it commits", async () => {
    const cursor = workerCursor("test-cursor", uniqueKey(), schema);
    expect(await cursor.read()).toBeNull();
    await db().$transaction((tx) => cursor.write(tx, { height: "10" }));
    expect(await cursor.read()).toEqual({ height: "10" });

    await expect(
      db().$transaction(async (tx) => {
        await cursor.write(tx, { height: "11" });
        expect(await cursor.read(tx)).toEqual({ height: "11" });
        // Not visible outside the transaction before it commits.
        expect(await cursor.read()).toEqual({ height: "10" });
        throw new Error("the data failed to store");
      }),
    ).rejects.toThrow("the data failed to store");
    expect(await cursor.read()).toEqual({ height: "10" });

    await db().$transaction((tx) => cursor.write(tx, { height: "11" }));
    expect(await cursor.read()).toEqual({ height: "11" });
  });

  it("with an expected value, moves only from it: of two writers from the same value, one commits", async () => {
    const key = uniqueKey();
    const cursor = workerCursor("test-cursor", key, schema);
    await db().$transaction((tx) => cursor.write(tx, { height: "1" }, { expected: null }));
    await expect(db().$transaction((tx) => cursor.write(tx, { height: "1" }, { expected: null }))).rejects.toBeInstanceOf(CursorConflictError);
    await expect(db().$transaction((tx) => cursor.write(tx, { height: "3" }, { expected: { height: "2" } }))).rejects.toBeInstanceOf(CursorConflictError);
    expect(await cursor.read()).toEqual({ height: "1" });

    const results = await Promise.allSettled(
      ["2a", "2b"].map((h) =>
        db().$transaction(async (tx) => {
          await cursor.write(tx, { height: h }, { expected: { height: "1" } });
          await delay(50);
        }),
      ),
    );
    expect(results.map((r) => r.status).toSorted()).toEqual(["fulfilled", "rejected"]);
    const winner = results[0]!.status === "fulfilled" ? "2a" : "2b";
    expect(await cursor.read()).toEqual({ height: winner });
    expect(results.find((r) => r.status === "rejected")).toMatchObject({ reason: expect.any(CursorConflictError) });

    // A stored value the schema does not accept is an error, not a silent null.
    await db().$transaction((tx) => workerCursor("test-cursor", key, z.object({ height: z.number() })).write(tx, { height: 5 }));
    await expect(cursor.read()).rejects.toThrow(`the stored cursor of test-cursor ${key} is not valid`);
  });
});
