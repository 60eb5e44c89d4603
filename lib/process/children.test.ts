import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isAlive, processInfo, spawnTied, stopLeftover } from "./children";

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
