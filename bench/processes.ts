/**
 * Child processes of a benchmark: services started in their own process group and stopped by the
 * cleanup, and the Linux /proc process tree (which Node process does the work behind a wrapper).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { cleanup } from "./cleanup";

/** Spawned process groups still alive: killed synchronously if the bench process exits anyway. */
const liveGroups = new Set<number>();

process.on("exit", () => {
  for (const pgid of liveGroups) killGroup(pgid, "SIGKILL");
});

function killGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

export interface Service {
  name: string;
  /** The spawned process (also the id of its process group). */
  pid: number;
  child: ChildProcess;
  /** Last lines of its stdout and stderr, for error messages. */
  output(): string;
  exited(): boolean;
  /** SIGTERM to the spawned process, SIGKILL to its whole group after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Starts `node <args>` in its own process group (so a Ctrl-C in the terminal reaches only the
 * bench, which stops the services in order), registered with the cleanup.
 */
export function spawnNode(name: string, args: string[], opts: { env: NodeJS.ProcessEnv; cwd?: string; echo?: boolean }): Service {
  const child = spawn(process.execPath, args, { cwd: opts.cwd, env: opts.env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  if (child.pid === undefined) throw new Error(`could not start ${name}`);
  const pid = child.pid;
  liveGroups.add(pid);
  const lines: string[] = [];
  const collect = (chunk: Buffer) => {
    for (const line of chunk.toString("utf8").split("\n")) {
      if (line.trim() === "") continue;
      lines.push(line);
      if (lines.length > 80) lines.shift();
      if (opts.echo) process.stderr.write(`[${name}] ${line}\n`);
    }
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  let exited = false;
  const exit = new Promise<void>((resolve) => {
    child.once("exit", () => {
      exited = true;
      resolve();
    });
    child.once("error", (e) => {
      lines.push(`spawn error: ${e.message}`);
      exited = true;
      resolve();
    });
  });

  let stopping: Promise<void> | undefined;
  const stop = (graceMs = 15_000) =>
    (stopping ??= (async () => {
      if (!exited) {
        try {
          process.kill(pid, "SIGTERM");
        } catch {
          // already gone
        }
        const timer = sleep(graceMs).then(() => "timeout" as const);
        if ((await Promise.race([exit.then(() => "exited" as const), timer])) === "timeout") {
          console.error(`[bench] ${name} did not stop within ${graceMs / 1000} s; killing it`);
        }
      }
      // Whatever is left of the group (e.g. the script under a tsx wrapper).
      killGroup(pid, "SIGKILL");
      liveGroups.delete(pid);
    })());
  const unregister = cleanup.add(`stop ${name}`, () => stop());
  void exit.then(() => {
    // Keep the cleanup step only while something of the group may still run.
    if (!groupAlive(pid)) {
      liveGroups.delete(pid);
      unregister();
    }
  });
  return { name, pid, child, output: () => lines.join("\n"), exited: () => exited, stop };
}

function groupAlive(pgid: number): boolean {
  return killGroup(pgid, 0);
}

/** Polls `probe` until it returns true; fails early when the service exits. */
export async function waitUntilReady(service: Service, probe: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (service.exited()) throw new Error(`${service.name} exited before it was ready:\n${service.output()}`);
    if (await probe().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${service.name} was not ready within ${timeoutMs / 1000} s:\n${service.output()}`);
    await sleep(100);
  }
}

/** Parent → children, from one scan of /proc (Linux; empty elsewhere). */
function processTree(): Map<number, number[]> {
  const tree = new Map<number, number[]>();
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return tree;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // "pid (comm) state ppid ...": comm may contain spaces, so split after the last ")".
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const list = tree.get(ppid);
      if (list) list.push(Number(entry));
      else tree.set(ppid, [Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  return tree;
}

/** A process and all its descendants. */
export function processAndDescendants(pid: number): number[] {
  const tree = processTree();
  const out: number[] = [];
  const todo = [pid];
  while (todo.length > 0) {
    const p = todo.pop()!;
    out.push(p);
    todo.push(...(tree.get(p) ?? []));
  }
  return out;
}

function isNode(pid: number): boolean {
  try {
    const argv0 = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[0] ?? "";
    return argv0 === process.execPath || path.basename(argv0) === "node";
  } catch {
    return false;
  }
}

/**
 * The Node process doing the work behind `pid`: the tsx CLI runs the script in a child Node
 * process, so follow a single Node child down (other children, like esbuild's, don't count).
 */
export function workerPid(pid: number): number {
  let current = pid;
  for (let depth = 0; depth < 3; depth++) {
    const children = (processTree().get(current) ?? []).filter(isNode);
    if (children.length !== 1) break;
    current = children[0]!;
  }
  return current;
}
