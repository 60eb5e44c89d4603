import { mkdtemp, readFile, rm } from "node:fs/promises";
import { connect } from "node:net";
import os from "node:os";
import path from "node:path";
import { killTied, spawnTied } from "@/lib/process/children";
import { freePort } from "./ports";

export interface TestRedis {
  url: string;
  /** The redis-server process (for CPU accounting). */
  pid: number;
  /** Freezes the server (SIGSTOP): connections stay open and nothing is answered. */
  freeze(): void;
  /** Wakes a frozen server (SIGCONT). */
  thaw(): void;
  stop(): Promise<void>;
}

/** Debian's redis-server on a free port, without persistence, tied to this process's life. */
export async function startRedis(): Promise<TestRedis> {
  const port = await freePort();
  const dir = await mkdtemp(path.join(os.tmpdir(), "blockgate-redis-"));
  const pidFile = path.join(dir, "pid");
  const child = spawnTied("redis-server", ["--save", "", "--appendonly", "no", "--port", String(port), "--bind", "127.0.0.1", "--dir", dir], { pidFile, output: "ignore", deathSignal: "KILL" });
  const until = Date.now() + 10_000;
  while (!(await answers(port))) {
    if (Date.now() > until || child.exitCode !== null) throw new Error(`redis-server did not start on port ${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const pid = Number(await readFile(pidFile, "utf8"));
  return {
    url: `redis://127.0.0.1:${port}`,
    pid,
    freeze: () => process.kill(pid, "SIGSTOP"),
    thaw: () => process.kill(pid, "SIGCONT"),
    async stop() {
      process.kill(pid, "SIGCONT");
      killTied(child);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Whether a Redis answers PING on the port. */
function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.setTimeout(500, () => socket.destroy());
    socket.once("error", () => resolve(false));
    socket.once("close", () => resolve(false));
    socket.once("connect", () => socket.write("PING\r\n"));
    socket.once("data", (d) => {
      resolve(d.toString().startsWith("+PONG"));
      socket.destroy();
    });
  });
}
