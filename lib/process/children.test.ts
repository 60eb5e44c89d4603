import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isAlive, processInfo, spawnTied, stopLeftover, supervise } from "./children";

const dirs: string[] = [];
async function scratch(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "blockgate-children-"));
  dirs.push(dir);
  return dir;
}
afterAll(async () => {
  for (const d of dirs) await fs.rm(d, { recursive: true, force: true });
});

async function waitFor(what: string, check: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Alive and not a zombie waiting for its parent to reap it. */
const running = (pid: number) => isAlive(pid) && !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));

describe("children tied to this process", () => {
  it("stop when the parent is killed with SIGKILL: a tied child and a watched one", async () => {
    const pidFile = path.join(await scratch(), "child.pid");
    const parent = spawn(process.execPath, ["--import", "tsx", path.join(import.meta.dirname, "fixtures", "parent.ts"), pidFile], { stdio: ["ignore", "pipe", "inherit"] });
    const line = await new Promise<string>((resolve) => parent.stdout.once("data", (d: Buffer) => resolve(d.toString())));
    const { watched } = JSON.parse(line) as { wrapper: number; watched: number };
    const child = Number(readFileSync(pidFile, "utf8"));
    expect(processInfo(child)?.command).toContain("sleep 300");
    expect(running(watched)).toBe(true);
    parent.kill("SIGKILL");
    await waitFor("the tied child to stop", () => !running(child));
    await waitFor("the watched child to stop", () => !running(watched));
  });

  it("passes SIGTERM on to the child and exits with its status", async () => {
    const child = spawnTied("sh", ["-c", "trap 'exit 7' TERM; while :; do sleep 0.05; done"], { output: "ignore" });
    await new Promise((r) => setTimeout(r, 200));
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    child.kill("SIGTERM");
    expect(await exited).toBe(7);
  });
});

describe("stopLeftover", () => {
  it("stops a live process named by a pid file when its command matches, and leaves others alone", async () => {
    const dir = await scratch();
    const sleeper = spawn("sleep", ["302"], { detached: true, stdio: "ignore" });
    const pidFile = path.join(dir, "x.pid");
    writeFileSync(pidFile, String(sleeper.pid));
    expect(await stopLeftover(pidFile, (c) => c.includes("anvil"))).toBeNull();
    expect(running(sleeper.pid!)).toBe(true);
    writeFileSync(pidFile, String(sleeper.pid));
    expect(await stopLeftover(pidFile, (c) => c.includes("sleep 302"))).toBe(sleeper.pid);
    await waitFor("the leftover to stop", () => !running(sleeper.pid!));
    // A stale file (no such process) is removed and nothing is stopped.
    writeFileSync(pidFile, "999999");
    expect(await stopLeftover(pidFile, () => true)).toBeNull();
    await expect(fs.access(pidFile)).rejects.toThrow();
  });
});

describe("supervise", () => {
  /** A real process that fails to start (exits 1 at once), as a restart attempt rejects then. */
  const failingStart = () =>
    new Promise<ChildProcess>((_, reject) => {
      spawn("sh", ["-c", "exit 1"], { stdio: "ignore" }).once("exit", (code) => reject(new Error(`exited with ${code}`)));
    });
  const sleeper = () => spawn("sleep", ["303"], { stdio: "ignore" });

  it("restarts a process that exits on its own, doubling the delay while attempts fail, and back to the first delay once one succeeds", async () => {
    const first = sleeper();
    const events: string[] = [];
    let attempts = 0;
    let restarted: (child: ChildProcess) => void = () => undefined;
    const supervised = supervise(first, {
      minMs: 10,
      maxMs: 50,
      restart: () => (++attempts <= 4 ? failingStart() : Promise.resolve(sleeper())),
      onExit: (_code, signal, delayMs) => events.push(`exit ${signal} next in ${delayMs}`),
      onRestartFailed: (_e, delayMs, attempt) => events.push(`attempt ${attempt} failed, next in ${delayMs}`),
      onRestarted: (child, attempt) => {
        events.push(`restarted on attempt ${attempt}`);
        restarted(child);
      },
    });
    try {
      let next = new Promise<ChildProcess>((resolve) => (restarted = resolve));
      first.kill("SIGKILL");
      const second = await next;
      expect(supervised.current()).toBe(second);
      expect(running(second.pid!)).toBe(true);
      expect(events).toEqual([
        "exit SIGKILL next in 10",
        "attempt 1 failed, next in 20",
        "attempt 2 failed, next in 40",
        "attempt 3 failed, next in 50",
        "attempt 4 failed, next in 50",
        "restarted on attempt 5",
      ]);

      events.length = 0;
      next = new Promise<ChildProcess>((resolve) => (restarted = resolve));
      second.kill("SIGKILL");
      await next;
      expect(events).toEqual(["exit SIGKILL next in 10", "restarted on attempt 1"]);
    } finally {
      await supervised.stop(async (child) => void child.kill("SIGKILL"));
    }
  });

  it("does not restart what stop() stopped, and stops a restart that was under way", async () => {
    const first = sleeper();
    let started: ChildProcess | undefined;
    let attemptBegan: () => void = () => undefined;
    const began = new Promise<void>((resolve) => (attemptBegan = resolve));
    const supervised = supervise(first, {
      minMs: 1,
      maxMs: 1,
      restart: async () => {
        attemptBegan();
        await new Promise((r) => setTimeout(r, 100));
        started = sleeper();
        return started;
      },
    });
    first.kill("SIGKILL");
    await began;
    const stoppedPids: number[] = [];
    await supervised.stop(async (child) => {
      stoppedPids.push(child.pid!);
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
      }
    });
    expect(started).toBeDefined();
    expect(stoppedPids.sort()).toEqual([first.pid!, started!.pid!].sort());
    expect(running(started!.pid!)).toBe(false);
  });
});
